"""Where ``tcplens analyze`` spends its time: each stage on the 1M and 5M bulk captures, in-process.

Complements bench_analyze.py (which times whole runs from outside against ``tcptrace -l -r``):
this one runs read → TCP analysis → diagnosis → report + JSON in one process on the captures
bench_analyze.py builds in ``.bench/`` (run that first), and prints per stage the wall, user and
system seconds, the marginal cost per packet between 1M and 5M, and that cost as a share of the
per-packet budget the issue sets (a quarter of tcptrace's marginal time per packet, measured in
this run). Peak RSS is reported against the 5M file's size (target <= 3x).

Run with ``make bench BENCH=bench_stages``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = {name: ROOT / ".bench" / f"{name}.pcap" for name in ("bulk_1M", "bulk_5M")}
Stage = tuple[float, float, float]  # wall, user, system seconds


def clock() -> Stage:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), r.ru_utime, r.ru_stime


def since(start: Stage) -> Stage:
    now = clock()
    return now[0] - start[0], now[1] - start[1], now[2] - start[2]


def run_stages(path: Path) -> tuple[int, dict[str, Stage]]:
    from tcplens.capture import read_capture
    from tcplens.diagnosis import diagnose
    from tcplens.report import compose_report
    from tcplens.tcp.analyze import analyze_tcp

    times: dict[str, Stage] = {}

    def timed(name: str, work: Callable[[], Any]) -> Any:
        start = clock()
        result = work()
        times[name] = since(start)
        return result

    capture = timed("read", lambda: read_capture(path))
    analysis = timed("tcp", lambda: analyze_tcp(capture.packets))
    diagnosis = timed("diagnosis", lambda: diagnose(capture, analysis))
    timed(
        "report+json",
        lambda: json.dumps(compose_report(capture, analysis, findings=diagnosis.findings_json())),
    )
    return capture.info.packets, times


def tcptrace_seconds(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["tcptrace", "-l", "-r", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    missing = [str(p) for p in FILES.values() if not p.is_file()]
    if missing:
        print(f"bench: {', '.join(missing)} missing: run bench_analyze first", file=sys.stderr)
        return 1
    start = clock()
    import tcplens.diagnosis
    import tcplens.report
    import tcplens.tcp.analyze  # noqa: F401  (numpy, numba and the core: start-up cost)
    from tcplens.heap import reuse_freed_memory

    print(f"import: {since(start)[0]:.3f} s wall; load {os.getloadavg()[0]:.1f}")
    reuse_freed_memory()  # as `tcplens analyze` does
    run_stages(FILES["bulk_1M"])  # loads the numba cache: start-up, not per packet
    n1, t1 = run_stages(FILES["bulk_1M"])
    n5, t5 = run_stages(FILES["bulk_5M"])
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    trace = [min(tcptrace_seconds(FILES[n]) for _ in range(2)) for n in ("bulk_1M", "bulk_5M")]
    budget_ns = (trace[1] - trace[0]) / (n5 - n1) * 1e9 / 4
    print(f"budget: {budget_ns:.0f} ns/packet in all (tcptrace marginal / 4, this run)")
    print(
        f"{'stage':12s} {'1M wall':>8s} {'5M wall':>8s} {'5M user':>8s} {'5M sys':>8s}"
        f" {'ns/pkt':>7s} {'x budget':>8s}"
    )
    total = 0.0
    for stage in t1:
        per_pkt = (t5[stage][0] - t1[stage][0]) / (n5 - n1) * 1e9
        total += per_pkt
        print(
            f"{stage:12s} {t1[stage][0]:8.3f} {t5[stage][0]:8.3f} {t5[stage][1]:8.3f}"
            f" {t5[stage][2]:8.3f} {per_pkt:7.0f} {per_pkt / budget_ns:8.2f}"
        )
    print(f"{'all':12s} {'':8s} {'':8s} {'':8s} {'':8s} {total:7.0f} {total / budget_ns:8.2f}")
    size5 = FILES["bulk_5M"].stat().st_size / 2**20
    print(f"peak RSS {peak_mib:.0f} MiB = {peak_mib / size5:.2f}x the 5M file (target <= 3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
