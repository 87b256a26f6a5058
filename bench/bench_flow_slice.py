"""The flow slice (services/flow_slice.py: one flow's packets cut from the stored capture, what
the flow page's Wireshark panel downloads) against ``editcap -F pcap -r`` cutting the same frames (the same bytes), on the
~1M-packet capture of ``bench_reader`` (built once into ``.bench/reader-1m.pcap``).

The flow is the capture's last connection (its frames are the file's last ones: the walk
crosses the whole file, the worst case of a request), cut from the plain file (mapped) and from
its gzip (streamed through the decompressor). Best of 3 each; wall and CPU time of this process
for the slice, of the child for editcap (on a shared machine wall time includes waiting for a
core).
"""

from __future__ import annotations

import gzip
import io
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_analyze import read_pcap
from bench_reader import OUT_DIR, TEMPLATE, build_capture

from tcplens.services.flow_slice import cut_slice

RUNS = 3


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measure_slice(path: Path, frames: np.ndarray) -> tuple[float, float, int]:
    best = (float("inf"), float("inf"), 0)
    for _ in range(RUNS):
        wall, cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF)
        with path.open("rb") as source:
            cut = cut_slice(source, frames, io.BytesIO())
        best = (
            min(best[0], time.perf_counter() - wall),
            min(best[1], _cpu(resource.RUSAGE_SELF) - cpu),
            cut.size,
        )
    return best


def measure_editcap(path: Path, first: int, last: int, out: Path) -> tuple[float, float]:
    best = (float("inf"), float("inf"))
    for _ in range(RUNS):
        wall, cpu = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
        subprocess.run(
            ["editcap", "-F", "pcap", "-r", str(path), str(out), f"{first}-{last}"], check=True
        )
        best = (
            min(best[0], time.perf_counter() - wall),
            min(best[1], _cpu(resource.RUSAGE_CHILDREN) - cpu),
        )
    return best


def main() -> int:
    if not TEMPLATE.is_file():
        print(f"bench/bench_flow_slice: template capture {TEMPLATE} not found", file=sys.stderr)
        return 1
    path = OUT_DIR / "reader-1m.pcap"
    if not path.is_file():
        print(f"building {path} …", flush=True)
        build_capture(path)
    zipped = OUT_DIR / "reader-1m.pcap.gz"
    if not zipped.is_file():
        with path.open("rb") as plain, gzip.open(zipped, "wb", compresslevel=1) as packed:
            shutil.copyfileobj(plain, packed, 1 << 20)
    per_copy = len(read_pcap(TEMPLATE).data)  # one connection of the replicated capture
    packets = len(read_pcap(path).data)
    first, last = packets - per_copy + 1, packets
    frames = np.arange(first, last + 1, dtype=np.int64)
    print(f"capture          {path.name}: {packets:,} packets, {path.stat().st_size / 1e6:.1f} MB")
    print(f"machine          {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"flow             the last connection: frames {first:,}..{last:,}")
    out = OUT_DIR / "slice-editcap.pcap"
    for name, source in (("plain", path), ("gzip", zipped)):
        wall, cpu, size = measure_slice(source, frames)
        ref_wall, ref_cpu = measure_editcap(source, first, last, out)
        assert out.stat().st_size == size, "editcap and the slice disagree on the bytes"
        print(
            f"slice {name:<6}     {wall:.3f} s wall, {cpu:.3f} s CPU ({size / 1e6:.1f} MB); "
            f"editcap -r {ref_wall:.3f} s wall, {ref_cpu:.3f} s CPU; "
            f"ratio editcap / slice {ref_wall / wall:.2f}× (wall), {ref_cpu / cpu:.2f}× (CPU)"
        )
    out.unlink(missing_ok=True)
    return 0  # a measurement, not a test


if __name__ == "__main__":
    sys.exit(main())
