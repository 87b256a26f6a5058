"""Time per packet of the analysis on adversarial captures at 10^4, 10^5 and 10^6 packets (issue 31).

The shapes are ``backend/tests/tcp/adversarial.py``'s (one segment a million times over, one
flow of a million retransmissions, a million one-packet flows, a SACK block on every ACK, ACKs of
data never sent). Each capture goes through what a worker's analysis child does with an upload
(``services.analysis_child``: read, analyse, diagnose, the series files and the flow rows), in
this process, after a warm-up run (the kernels are loaded once). Printed per shape and size: the
wall and CPU seconds (CPU: this process's threads, what the other tenants of a shared machine
move least), the CPU time per packet and its ratio to the CPU time per packet at 10^4 (flat
within noise: every pass is O(n log n) or better; a quadratic pass makes the ratio ~100 at
10^6). Best of ``ROUNDS`` runs at 10^4 and 10^5, one run at 10^6.

Run with ``make bench BENCH=bench_adversarial``; ``SHAPES=name,name`` runs only those.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from tcplens.capture import read_capture  # noqa: E402
from tcplens.report import analyse_capture  # noqa: E402
from tcplens.services.analysis_child import write_series  # noqa: E402
from tcplens.services.flow_rows import write_flow_rows  # noqa: E402
from tests.tcp.adversarial import SHAPES  # noqa: E402

OUT = ROOT / ".bench" / "adversarial"
SIZES = (10_000, 100_000, 1_000_000)
ROUNDS = 3


def capture_file(shape: str, n: int) -> Path:
    path = OUT / f"{shape}_{n}.pcap"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_bytes(SHAPES[shape](n))
        partial.rename(path)
    return path


def analyse(path: Path) -> tuple[float, float]:
    """Wall and CPU seconds to analyse one capture as the worker's child does."""
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter(), time.process_time()
        capture = read_capture(path)
        analysis, report = analyse_capture(capture, consume_packets=True)
        keys = write_series(capture, analysis, Path(out), "bench")
        write_flow_rows(
            Path(out) / "flows.copy",
            report,
            capture_id="00000000-0000-0000-0000-000000000000",
            series_keys=keys,
        )
        return time.perf_counter() - started[0], time.process_time() - started[1]


def main() -> int:
    shapes = os.environ.get("SHAPES", ",".join(SHAPES)).split(",")
    analyse(capture_file(shapes[0], SIZES[0]))  # warm-up: loads the kernels
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"{'shape':<20} {'packets':>9} {'wall s':>8} {'cpu s':>8} {'cpu ns/packet':>14} "
        f"{'vs 10^4':>8}"
    )
    for shape in shapes:
        base = 0.0
        for n in SIZES:
            path = capture_file(shape, n)
            rounds = 1 if n >= 1_000_000 else ROUNDS
            wall, cpu = min((analyse(path) for _ in range(rounds)), key=lambda run: run[1])
            per_packet = cpu / n
            base = base or per_packet
            print(
                f"{shape:<20} {n:>9,} {wall:>8.3f} {cpu:>8.3f} {per_packet * 1e9:>14.0f} "
                f"{per_packet / base:>8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
