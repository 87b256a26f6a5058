"""Run every benchmark script ``bench/*.py`` (except this runner), one after the other.

A benchmark is a script that measures its subject and a reference in the same run and prints the
ratio (see CONVENTIONS.md): nothing here times anything itself. Pass names to run only some:
``make bench BENCH="reader tcp"`` runs bench/reader.py and bench/tcp.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(p for p in BENCH_DIR.glob("*.py") if p.name != Path(__file__).name)
    if names:
        scripts = [p for p in scripts if p.stem in names]
        unknown = set(names) - {p.stem for p in scripts}
        if unknown:
            print(f"bench: no such benchmark: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
    if not scripts:
        print("bench: no benchmark scripts in bench/", file=sys.stderr)
        return 1
    results: list[tuple[str, int]] = []
    for script in scripts:
        print(f"\n==> bench/{script.name}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=BENCH_DIR.parent)
        print(f"<== bench/{script.name}: exit {code} after {time.perf_counter() - started:.1f} s")
        results.append((script.name, code))
    failed = [name for name, code in results if code != 0]
    print(f"\nbench: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
