"""The flow graphs' first draw and zoom/pan on a 1M-packet flow, in headless Chromium.

Runs the Playwright benchmark ``e2e/specs/graph-performance.spec.ts`` (the e2e suite skips it:
its limits depend on the machine's load) against the real app, as ``make test`` runs the e2e
suite: it prints the figures of every run, and the goals (first draw ≤ 300 ms from navigation,
zoom/pan ≥ 30 frames/s) are met when it passes.

Run with ``make bench BENCH=bench_graph`` (needs the built SPA: ``make spa``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    done = subprocess.run(
        ["npm", "run", "--silent", "test", "-w", "e2e", "--", "specs/graph-performance.spec.ts"],
        cwd=ROOT,
        env={**os.environ, "TCPLENS_BENCH": "1"},
        check=False,
    )
    print(
        "graph performance goals (first draw ≤ 300 ms, zoom/pan ≥ 30 frames/s): "
        + ("met" if done.returncode == 0 else "NOT met (see above)")
    )
    return 0  # a measurement: the line above says whether the goals were met


if __name__ == "__main__":
    sys.exit(main())
