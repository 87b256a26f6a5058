"""Where ``tcplens analyze`` spends its time: the stages of the real program, 1M and 5M bulk.

Complements bench_analyze.py (which times whole runs from outside against ``tcptrace -l -r``).
Each run here is the ``tcplens analyze --json`` program as a user runs it, in its own process:
its imports, its kernels loaded from the numba cache, fresh memory, its exit. The
stages are timed inside it by ``STAGES``, a wrapper that times a few named functions of the
product as their modules finish importing (nothing is imported earlier than the program does
it). An earlier version ran the stages in-process, warm, one after the other: that hid what
only the real program pays (per packet at 5M, the decoding there cost 27-35 ns against 33-42
in the program, the TCP analysis 30 against 44).

The rounds interleave the two files and tcptrace, so a slow spell of this shared machine falls
on all of them. Printed per stage: the median seconds on each file and the marginal cost per
packet between them, against the per-packet budget the issue sets (a quarter of tcptrace's
marginal time per packet, medians of the same rounds). ``other`` is the rest of the run: the
interpreter's start, the imports and loading the kernels (the same for any file) and what no
stage covers; ``run`` is the whole program's wall time, measured from outside.

Run with ``make bench BENCH=bench_stages`` (after bench_analyze, which builds the captures).
With ``BENCH_REFERENCE=<a checkout>`` (its ``backend/``), that tree runs in the same rounds too
(stages it does not have show 0 s), and the ratios of the whole runs are printed.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {name: ROOT / ".bench" / f"{name}.pcap" for name in ("bulk_1M", "bulk_5M")}
ROUNDS = 5
MARKER = "tcplens-stages "

# The program, with the functions below timed (module, attribute; ``Class.method`` for a
# method) once their modules are imported by the program itself; at its exit (``runtime.
# exit_now``) one line on stderr: MARKER + JSON {stage: seconds}.
STAGES = {
    "walk": ("tcplens.capture.reader", "walk_pcap"),
    "decode": ("tcplens.capture.reader", "_Reading._decode"),
    "copies": ("tcplens.capture.reader", "mark_copies"),
    "clock": ("tcplens.capture.reader", "clock_steps"),
    "flows": ("tcplens.tcp.analyze", "assign_flows"),
    "echoes": ("tcplens.tcp.analyze", "timestamp_echoes"),
    "events": ("tcplens.tcp.analyze", "build_segments"),
    "rtt": ("tcplens.tcp.analyze", "rtt_samples"),
    "diagnose": ("tcplens.diagnosis.engine", "diagnose"),
    "output": ("tcplens.report", "write_report"),
}
# parts of a stage above, printed after them (not counted again in ``other``)
DETAILS = {
    "diag.facts": ("tcplens.diagnosis.engine", "flow_facts"),
    "diag.labels": ("tcplens.diagnosis.engine", "labelled_time"),
    "diag.conns": ("tcplens.diagnosis.engine", "LabelledConnections"),
    "diag.predict": ("tcplens.diagnosis.engine", "predict"),
}
PROGRAM = """
import builtins, json, sys, time
STAGES = json.loads(sys.argv.pop(1))
MARKER = sys.argv.pop(1)
spent = dict.fromkeys(STAGES, 0.0)
waiting = {}  # module: [(stage, attribute path)] not patched yet
for stage, (module, path) in STAGES.items():
    waiting.setdefault(module, []).append((stage, path))

def timed(stage, function):
    def run(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[stage] += time.perf_counter() - start
    return run

def patch():
    for module in [m for m in waiting if m in sys.modules]:
        owner_module = sys.modules[module]
        entries = waiting[module]
        # a module is patched once all its attributes exist (it may still be importing)
        targets = []
        for stage, path in entries:
            *owners, name = path.split(".")
            owner = owner_module
            for part in owners:
                owner = getattr(owner, part, None)
            if owner is None or not hasattr(owner, name):
                break
            targets.append((stage, owner, name))
        else:
            for stage, owner, name in targets:
                setattr(owner, name, timed(stage, getattr(owner, name)))
            del waiting[module]

real_import = builtins.__import__
def hooked_import(*args, **kwargs):
    module = real_import(*args, **kwargs)
    if waiting:
        patch()
    return module
builtins.__import__ = hooked_import

import tcplens.cli as cli
import tcplens.runtime as runtime
real_end = runtime.exit_now
def end(code):
    if waiting:
        sys.stderr.write(f"stages never reached: {sorted(waiting)}\\n")
    sys.stderr.write(MARKER + json.dumps(spent) + "\\n")
    real_end(code)
runtime.exit_now = end
sys.argv[0] = "tcplens"
cli.main()
"""


def timed_stages(backend: Path) -> dict[str, tuple[str, str]]:
    """The stages and details whose function the tree at ``backend`` has (a reference tree
    may predate some: those are left out of its runs, and show as 0 s)."""
    found = {}
    for stage, (module, path) in {**STAGES, **DETAILS}.items():
        source = backend.joinpath(*module.split(".")).with_suffix(".py")
        name = path.split(".")[-1]
        text = source.read_text() if source.is_file() else ""
        if f" {name}(" in text or f" {name}," in text or f"import {name}" in text:
            found[stage] = (module, path)
    return found


def run_program(path: Path, backend: Path = ROOT / "backend") -> dict[str, float]:
    """One ``tcplens analyze --json`` run of the tree at ``backend``: its stages' seconds and
    ``run``, its wall time."""
    stages_here = timed_stages(backend)
    command = [sys.executable, "-c", PROGRAM, json.dumps(stages_here), MARKER]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "analyze", str(path), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(backend)},
    )
    wall = time.perf_counter() - start
    lines = [line for line in done.stderr.splitlines() if line.startswith(MARKER)]
    if done.returncode != 0 or not lines or "never reached" in done.stderr:
        raise SystemExit(f"bench: tcplens on {path.name} failed:\n{done.stderr}")
    spent: dict[str, float] = json.loads(lines[-1][len(MARKER) :])
    stages = {s: spent.get(s, 0.0) for s in STAGES}
    stages["other"] = wall - sum(stages.values())
    stages["run"] = wall
    stages |= {s: spent.get(s, 0.0) for s in DETAILS}
    return stages


def tcptrace_seconds(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["tcptrace", "-l", "-r", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def packets(path: Path, backend: Path = ROOT / "backend") -> int:
    """The packets of a capture, as ``tcplens analyze --json`` reports them (untimed: this run
    also loads, or compiles, the numba cache, which is not per packet)."""
    done = subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "analyze", str(path), "--json"],
        capture_output=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(backend)},
    )
    count: int = json.loads(done.stdout)["capture"]["packets"]
    return count


def main() -> int:
    missing = [str(p) for p in FILES.values() if not p.is_file()]
    if missing:
        print(f"bench: {', '.join(missing)} missing: run bench_analyze first", file=sys.stderr)
        return 1
    trees = {"this tree": ROOT / "backend"}
    reference = os.environ.get("BENCH_REFERENCE")
    if reference:
        trees["reference"] = Path(reference).resolve() / "backend"
    counts = {tree: [packets(FILES[name], b) for name in FILES] for tree, b in trees.items()}
    n1, n5 = counts["this tree"]
    # runs[tree][file]: each round's stages
    runs: dict[str, dict[str, list[dict[str, float]]]] = {t: {n: [] for n in FILES} for t in trees}
    theirs: dict[str, list[float]] = {name: [] for name in FILES}
    for _ in range(ROUNDS):
        for name, path in FILES.items():
            for tree, backend in trees.items():
                runs[tree][name].append(run_program(path, backend))
            theirs[name].append(tcptrace_seconds(path))
    trace = {name: statistics.median(seconds) for name, seconds in theirs.items()}
    budget_ns = (trace["bulk_5M"] - trace["bulk_1M"]) / (n5 - n1) * 1e9 / 4
    print(
        f"tcplens analyze --json, by stage ({ROUNDS} rounds interleaved with tcptrace -l -r"
        f"{' and the reference ' + reference if reference else ''}, load "
        f"{os.getloadavg()[0]:.1f}; medians)"
    )
    print(
        f"tcptrace: 1M {trace['bulk_1M']:.3f} s, 5M {trace['bulk_5M']:.3f} s; budget: "
        f"{budget_ns:.0f} ns/packet in all (tcptrace's marginal / 4, these rounds)"
    )
    for tree, by_file in runs.items():
        print(f"-- {tree} ({trees[tree]})")
        print(f"{'stage':12s} {'1M s':>7s} {'5M s':>7s} {'ns/pkt':>7s} {'x budget':>8s}")
        for stage in [*STAGES, "other", "run", *DETAILS]:
            m1 = statistics.median(r[stage] for r in by_file["bulk_1M"])
            m5 = statistics.median(r[stage] for r in by_file["bulk_5M"])
            per_pkt = (m5 - m1) / (n5 - n1) * 1e9
            print(f"{stage:12s} {m1:7.3f} {m5:7.3f} {per_pkt:7.1f} {per_pkt / budget_ns:8.2f}")
    if reference:
        for name in FILES:
            ratios = sorted(
                a["run"] / b["run"]
                for a, b in zip(runs["this tree"][name], runs["reference"][name], strict=True)
            )
            print(
                f"{name}: run, this tree / reference per round "
                f"{' '.join(f'{r:.2f}' for r in ratios)}: median {statistics.median(ratios):.2f}"
            )
    print(
        "(each stage's marginal is a difference of medians: they need not add up to run's; "
        "run's own marginal is the figure bench_analyze compares; diag.* are parts of diagnose)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
