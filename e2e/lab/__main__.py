"""``python -m lab [--out DIR] [--only NAME ...] [--ci] [--pairs]``: regenerate the lab's captures
(``--pairs``: the before/after pairs of ``catalogue/pairs.py`` instead of the catalogue)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from lab import manifest as lab_manifest
from lab import runner, session
from lab.catalogue import catalogue
from lab.catalogue.pairs import pair_scenarios, pairs

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def run(names: list[str] | None, ci_only: bool, out: Path, pairs: bool = False) -> dict[str, Any]:
    pool = pair_scenarios() if pairs else catalogue()
    # a pair's name selects both its captures
    scenarios = [
        s
        for s in pool
        if (not names or s.name in names or s.name.rsplit("__", 1)[0] in names)
        and (s.ci or not ci_only)
    ]
    out.mkdir(parents=True, exist_ok=True)
    # --only remakes those captures and keeps the rest of an earlier run's manifest
    earlier = out / lab_manifest.NAME
    manifest: dict[str, Any] = json.loads(earlier.read_text()) if names and earlier.exists() else {}
    for sc in scenarios:
        try:
            entry = runner.run_scenario(sc, out)
        except Exception as exc:  # one broken run must not lose the others: record it
            entry = {
                "file": None,
                "expected_primary_factor": sc.expected_primary_factor,
                "error": f"{type(exc).__name__}: {exc}",
            }
        manifest[sc.name] = entry
        print(summary_line(sc.name, entry), flush=True)
        lab_manifest.write(out, manifest)
    return manifest


def summary_line(name: str, e: dict[str, Any]) -> str:
    if "error" in e:
        return f"FAIL  {name}: {e['error']}"
    k = e["kernel"]["sender"]
    verdict = "ok  " if e["ground_truth"]["agrees"] else "DISAGREE"
    failed = [c["check"] for c in e["ground_truth"]["checks"] if not c["passed"]]
    return (
        f"{verdict} {name:40s} {e['expected_primary_factor']:18s} busy {k['busy_ms']:8.1f} ms "
        f"rwnd {k['rwnd_limited_ms']:8.1f} sndbuf {k['sndbuf_limited_ms']:8.1f} "
        f"retrans {k['total_retrans']:3d} pkts {e['capture']['packets']} {e['run_s']} s"
        + (f"  failed: {failed}" if failed else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", help="scenario names")
    parser.add_argument("--ci", action="store_true", help="only the CI subset")
    parser.add_argument("--pairs", action="store_true", help="the before/after pairs")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args()
    if args.list:
        for sc in catalogue():
            marks = " ".join(m for m, on in (("ci", sc.ci), ("heldout", sc.heldout)) if on)
            print(f"{sc.name:40s} {sc.expected_primary_factor:18s} {marks}")
        for pair in pairs():
            print(f"{pair.name:40s} {pair.cause:18s} pair (--pairs)")
        return 0
    reason = session.missing_requirements()
    if reason:
        print(f"lab: {reason}", file=sys.stderr)
        return 2
    removed = session.begin()
    if removed:
        print(f"removed stale namespaces: {removed}", file=sys.stderr)
    started = time.monotonic()
    manifest = run(args.only, args.ci, args.out, args.pairs)
    bad = [n for n, e in manifest.items() if "error" in e or not e["ground_truth"]["agrees"]]
    print(
        f"{len(manifest)} captures in {time.monotonic() - started:.0f} s into {args.out}; "
        f"{len(bad)} failed or disagree: {bad}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
