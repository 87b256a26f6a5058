"""The analysis as the service runs it: a child forked from the warmed fork server, 1M and 5M.

The worker (``services.analysis``) runs each analysis in a process forked from its fork server,
which loaded the kernels and set the process up once (``tcplens.runtime``). This bench starts
that fork server the service's way and times analyses of the bulk captures of bench_analyze
from the fork to the child's "finished" message (reading, analysing, diagnosing, writing the
series and flow rows: ``services.analysis_child.run``), with the child's own stages.

Against a reference tree in the same run: ``BENCH_REFERENCE=<a checkout>`` (its ``backend/``,
e.g. ``git archive <commit> backend | tar -x -C /tmp/ref``) runs the same driver from those
sources; the rounds interleave the trees and the files, so a slow spell of this shared machine
falls on both. Without it, this tree alone.

Run with ``make bench BENCH=bench_worker`` (after bench_analyze, which builds the captures).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = {name: ROOT / ".bench" / f"{name}.pcap" for name in ("bulk_1M", "bulk_5M")}
ROUNDS = 7

# Runs in a process of the tree under test: starts its fork server, then analyses each path it
# reads on stdin in a child forked from it, one JSON line per analysis.
DRIVER = """
import json, sys, tempfile, time
from tcplens.services import analysis, analysis_child

analysis.start_fork_server()
print("ready", flush=True)
for line in sys.stdin:
    with tempfile.TemporaryDirectory() as out:
        receiver, sender = analysis._MP.Pipe(duplex=False)
        started = time.time()
        child = analysis._MP.Process(
            target=analysis_child.run,
            args=(line.strip(), out, 8 << 30, sender, "00000000-0000-0000-0000-000000000000", "r"),
        )
        child.start()
        sender.close()
        stages = {}
        while True:
            try:
                stage, _, _, at = receiver.recv()
            except EOFError:
                break
            stages.setdefault(stage, at)
            if stage == "finished":
                break
        finished = time.time()
        child.join()
        print(json.dumps({"wall": finished - started, "stages": stages, "started": started,
                          "code": child.exitcode}), flush=True)
"""


class Driver:
    """One tree's fork server and its driver process."""

    def __init__(self, backend: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(backend)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=backend.parent,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"bench_worker: the driver of {backend} did not start")

    def analyse(self, path: Path) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        result: dict[str, Any] = json.loads(self.process.stdout.readline())
        if result["code"] != 0 or "finished" not in result["stages"]:
            raise SystemExit(f"bench_worker: the analysis of {path.name} failed: {result}")
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def stage_seconds(result: dict[str, Any]) -> dict[str, float]:
    """Each stage's seconds: to the next stage's message (``reading`` from the fork)."""
    order = ["reading", "analysing", "diagnosing", "storing", "finished"]
    at = result["stages"]
    times = [result["started"]] + [at[s] for s in order[1:]]
    out = {s: b - a for s, a, b in zip(order[:-1], times[:-1], times[1:], strict=True)}
    out["total"] = result["wall"]
    return out


def main() -> int:
    missing = [str(p) for p in FILES.values() if not p.is_file()]
    if missing:
        print(f"bench: {', '.join(missing)} missing: run bench_analyze first", file=sys.stderr)
        return 1
    trees = {"this tree": ROOT / "backend"}
    reference = os.environ.get("BENCH_REFERENCE")
    if reference:
        trees["reference"] = Path(reference).resolve() / "backend"
    drivers = {name: Driver(backend) for name, backend in trees.items()}
    try:
        for driver in drivers.values():  # untimed: each tree's first child of each file
            for path in FILES.values():
                driver.analyse(path)
        runs: dict[tuple[str, str], list[dict[str, float]]] = {}
        order = list(drivers.items())
        for _ in range(ROUNDS):
            # Which tree goes first alternates round by round: a run's storing writes its
            # series file through the page cache (525 MB at 5M), and the first 5M run of a round
            # wrote it 2-8x slower than the second (system time; the same code in both trees).
            order.reverse()
            for file, path in FILES.items():
                for tree, driver in order:
                    runs.setdefault((tree, file), []).append(stage_seconds(driver.analyse(path)))
    finally:
        for driver in drivers.values():
            driver.close()
    print(
        f"worker analysis (forked from the warmed fork server), {ROUNDS} rounds interleaved, "
        f"load {os.getloadavg()[0]:.1f}; medians in seconds"
    )
    stages = ["reading", "analysing", "diagnosing", "storing", "total"]
    print(f"{'tree':10s} {'file':8s} " + " ".join(f"{s:>10s}" for s in stages))
    for (tree, file), results in sorted(runs.items(), key=lambda item: (item[0][1], item[0][0])):
        medians = [statistics.median(r[s] for r in results) for s in stages]
        print(f"{tree:10s} {file:8s} " + " ".join(f"{m:10.3f}" for m in medians))
    if reference:
        for file in FILES:
            ours = [r["total"] for r in runs[("this tree", file)]]
            theirs = [r["total"] for r in runs[("reference", file)]]
            ratios = sorted(a / b for a, b in zip(ours, theirs, strict=True))
            print(
                f"{file}: this tree / reference per round {' '.join(f'{r:.2f}' for r in ratios)}: "
                f"median {statistics.median(ratios):.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
