"""Benchmark ``tcplens analyze --json`` end to end against ``tcptrace -l -r`` (issue 4, "Speed").

Builds, into the git-ignored ``.bench/``, bulk-transfer captures of about 1M and 5M packets by
replicating a lab capture with rewritten client ports (copies one after the other in time), and
a capture of 100k short flows (a 12-packet HTTP exchange with rewritten client address and
port). Then it times both tools from outside, in this run, and prints:

* the marginal rate (packets/s between the 1M and the 5M file, which takes out interpreter and
  JIT start-up) of each tool, round by round, and their ratio (target: the median of the rounds'
  ratios >= 4);
* end-to-end times on the 5M file and on the 100k short flows (target: tcplens faster, medians);
* tcplens's peak memory against the file size (target: <= 3x).

With ``BENCH_REFERENCE=<a checkout>`` (its ``backend/``, e.g. ``git archive <commit> backend |
tar -x -C /tmp/ref``), that tree's ``tcplens analyze`` runs in the same rounds as a third tool,
``reference``, and the ratios of this tree to it are printed too.

Run with ``make bench BENCH=bench_analyze``. Needs tcptrace (``make venv`` installs it).
"""

from __future__ import annotations

import os
import shutil
import statistics
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".bench"
SHARED = ROOT.parent / "shared" / "captures"
BULK_SOURCE = SHARED / "lab" / "lossy_download.pcap"
SHORT_SOURCE = SHARED / "corpus" / "practical-packet-analysis" / "http_google.pcapng"
TCPLENS = [sys.executable, "-m", "tcplens.cli"]
ROUNDS = 11  # of each tool on each bulk file: this shared machine drifts 20-40 % in a minute
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)  # µs, Ethernet


@dataclass(frozen=True)
class Records:
    """One capture's records as (timestamp µs, bytes) for Ethernet/IPv4 TCP packets."""

    ts_us: np.ndarray
    data: list[bytes]
    orig_len: np.ndarray


def read_pcap(path: Path) -> Records:
    raw = path.read_bytes()
    assert struct.unpack_from("<I", raw, 0)[0] == 0xA1B2C3D4, "little-endian µs pcap expected"
    off, ts, data, orig = 24, [], [], []
    while off + 16 <= len(raw):
        sec, usec, incl, length = struct.unpack_from("<IIII", raw, off)
        ts.append(sec * 1_000_000 + usec)
        data.append(raw[off + 16 : off + 16 + incl])
        orig.append(length)
        off += 16 + incl
    return Records(np.array(ts, np.int64), data, np.array(orig, np.int64))


def read_pcapng(path: Path) -> Records:
    """Enhanced packet blocks of a little-endian pcapng with µs timestamps (enough here)."""
    raw = path.read_bytes()
    off, ts, data, orig = 0, [], [], []
    while off + 12 <= len(raw):
        kind, total = struct.unpack_from("<II", raw, off)
        if kind == 6:
            hi, lo, incl, length = struct.unpack_from("<IIII", raw, off + 12)
            ts.append((hi << 32) | lo)
            data.append(raw[off + 28 : off + 28 + incl])
            orig.append(length)
        off += total
    return Records(np.array(ts, np.int64), data, np.array(orig, np.int64))


def replicate(src: Records, copies: int, path: Path, *, vary_address: bool) -> int:
    """Write ``copies`` back-to-back copies of ``src`` with a distinct client endpoint each."""
    blob = bytearray()
    rec_off = []
    for ts, d, length in zip(src.ts_us.tolist(), src.data, src.orig_len.tolist(), strict=True):
        rec_off.append(len(blob))
        blob += struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(d), length) + d
    one = np.frombuffer(bytes(blob), np.uint8)
    offs = np.array(rec_off, np.int64)
    # client = the source of the first packet (the SYN); its port sits at Ethernet 14 + IHL
    first = src.data[0]
    ihl = (first[14] & 0x0F) * 4
    client_ip = first[26:30]
    ip_src_is_client = np.array([d[26:30] == client_ip for d in src.data])
    port_at = 16 + 14 + ihl + np.where(ip_src_is_client, 0, 2)
    ip_at = 16 + np.where(ip_src_is_client, 26, 30)
    span_us = int(src.ts_us[-1] - src.ts_us[0]) + 1000
    out = np.tile(one, copies)
    base = np.arange(copies, dtype=np.int64)[:, None] * one.size
    k = np.arange(copies, dtype=np.int64)[:, None]
    ts = src.ts_us[None, :] + k * span_us
    rec = (base + offs[None, :]).ravel()
    for i, field in enumerate((ts // 1_000_000, ts % 1_000_000)):
        b = field.astype("<u4").ravel().view(np.uint8).reshape(-1, 4)
        for j in range(4):
            out[rec + 4 * i + j] = b[:, j]
    shape = (copies, offs.size)
    port = np.broadcast_to(10_000 + k % 50_000, shape).astype(">u2")
    pb = port.ravel().view(np.uint8).reshape(-1, 2)
    pos = (base + offs[None, :] + port_at[None, :]).ravel()
    out[pos], out[pos + 1] = pb[:, 0], pb[:, 1]
    if vary_address:  # keep 5-tuples distinct beyond 50k copies: 10.x.y.z client addresses
        addr = np.broadcast_to(0x0A000000 + 1 + k // 50_000, shape).astype(">u4")
        ab = addr.ravel().view(np.uint8).reshape(-1, 4)
        apos = (base + offs[None, :] + ip_at[None, :]).ravel()
        for j in range(4):
            out[apos + j] = ab[:, j]
    with path.open("wb") as f:
        f.write(PCAP_HEADER)
        f.write(out.tobytes())
    return copies * len(src.data)


def read_through(path: Path) -> None:
    """Read the file once, untimed, so that every timed run finds it in the page cache.

    This machine drops the cached pages of files left unread for a while (a DAMON ``pageout``
    scheme, ``/sys/kernel/mm/damon``; ``fincore`` showed 87 of short_100k's 606 MiB in the page
    cache an hour after its last run). The first timed run of a capture then read it from the
    disk, and each round runs tcplens first: one such bulk_5M run took 9.3 s instead of 0.6 s,
    and short_100k, timed twice, has its median ride on that run.
    """
    with path.open("rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one run, stdout
    discarded. CPU time is what to compare on a shared machine: wall time there mostly
    measures the other tenants."""
    probe = (
        "import resource,subprocess,sys,time;t=time.perf_counter();"
        "c=subprocess.call(sys.argv[1:],stdout=subprocess.DEVNULL);"
        "e=time.perf_counter()-t;"
        "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(e,u.ru_utime+u.ru_stime,u.ru_maxrss/1024,c)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, env=env
    )
    wall, cpu, peak, code = out.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"bench: {' '.join(command)} exited {code}")
    return float(wall), float(cpu), float(peak)


def _median(runs: list[tuple[float, float, float]], k: int) -> float:
    return statistics.median(r[k] for r in runs)


def main() -> int:
    if shutil.which("tcptrace") is None:
        print("bench: tcptrace not installed (make venv installs it)", file=sys.stderr)
        return 1
    if not BULK_SOURCE.is_file() or not SHORT_SOURCE.is_file():
        print(f"bench: shared captures not found under {SHARED}", file=sys.stderr)
        return 1
    OUT.mkdir(exist_ok=True)
    bulk = read_pcap(BULK_SOURCE)
    files: dict[str, tuple[Path, int]] = {}
    for name, target in (("bulk_1M", 1_000_000), ("bulk_5M", 5_000_000)):
        path = OUT / f"{name}.pcap"
        copies = -(-target // len(bulk.data))
        n = copies * len(bulk.data)
        if not path.is_file():
            replicate(bulk, copies, path, vary_address=False)
        files[name] = (path, n)
    short = read_pcapng(SHORT_SOURCE)
    path = OUT / "short_100k.pcap"
    if not path.is_file():
        replicate(short, 100_000, path, vary_address=True)
    files["short_100k"] = (path, 100_000 * len(short.data))

    env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    load = os.getloadavg()[0]
    print(
        f"tcplens analyze --json vs tcptrace -l -r ({env_note}, load {load:.1f}); "
        f"{ROUNDS} rounds on the bulk files (each round runs both tools on both), 2 on short_100k"
    )
    # warm the numba cache once so the first timed run is not a compile
    subprocess.run(
        [*TCPLENS, "analyze", str(files["bulk_1M"][0]), "--json"], stdout=subprocess.DEVNULL
    )
    for path, _ in files.values():
        read_through(path)
    # runs[(tool, file)]: (wall, cpu, peak) of each run. The rounds interleave the tools and the
    # files, so a slow spell of this shared machine falls on both tools, not on one file of one.
    runs: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    commands = {
        "tcplens": lambda path: [*TCPLENS, "analyze", str(path), "--json"],
        "tcptrace": lambda path: ["tcptrace", "-l", "-r", str(path)],
    }
    envs: dict[str, dict[str, str] | None] = {"tcplens": None, "tcptrace": None}
    reference = os.environ.get("BENCH_REFERENCE")
    if reference:
        commands["reference"] = commands["tcplens"]
        envs["reference"] = {
            **os.environ,
            "PYTHONPATH": str(Path(reference).resolve() / "backend"),
        }
        # its numba cache warmed (or compiled) too
        subprocess.run(
            [*TCPLENS, "analyze", str(files["bulk_1M"][0]), "--json"],
            stdout=subprocess.DEVNULL,
            env=envs["reference"],
        )
    for round_ in range(ROUNDS):
        for name, (path, _) in files.items():
            if name == "short_100k" and round_ >= 2:
                continue
            for tool, command in commands.items():
                runs.setdefault((tool, name), []).append(measure(command(path), envs[tool]))
    for name, (path, n) in files.items():
        size_mb = path.stat().st_size / 2**20  # MiB, like ru_maxrss / 1024
        ours, theirs = runs[("tcplens", name)], runs[("tcptrace", name)]
        peak = max(r[2] for r in ours)
        print(
            f"{name:11s} {n:>9,d} pkts {size_mb:6.1f} MiB | tcplens {_median(ours, 0):6.2f} s wall "
            f"{_median(ours, 1):6.2f} s cpu {peak:6.0f} MiB peak ({peak / size_mb:.2f}x file) | "
            f"tcptrace {_median(theirs, 0):6.2f} s wall {_median(theirs, 1):6.2f} s cpu (medians)"
        )
    n1, n5 = files["bulk_1M"][1], files["bulk_5M"][1]
    size5 = files["bulk_5M"][0].stat().st_size / 2**20

    def marginal(tool: str, k: int) -> list[float]:
        """Per round: packets/s between the 1M and the 5M file."""
        one, five = runs[(tool, "bulk_1M")], runs[(tool, "bulk_5M")]
        return [(n5 - n1) / max(b[k] - a[k], 1e-9) for a, b in zip(one, five, strict=True)]

    ratios = {}
    for clock, k in (("wall", 0), ("cpu", 1)):
        ours, theirs = marginal("tcplens", k), marginal("tcptrace", k)
        per_round = sorted(a / b for a, b in zip(ours, theirs, strict=True))
        ratios[clock] = statistics.median(per_round)
        print(
            f"marginal rate ({clock}): tcplens {statistics.median(ours) / 1e6:.2f} M pkt/s, "
            f"tcptrace {statistics.median(theirs) / 1e6:.2f} M pkt/s (medians); ratio per round "
            f"{' '.join(f'{r:.2f}' for r in per_round)}: median {ratios[clock]:.2f}"
        )
    print(
        "  (wall time is the target: what a user waits for; cpu counts both cores' time, "
        "tcptrace uses one)"
    )
    checks = {"marginal rate >= 4x tcptrace (wall, median of the rounds)": ratios["wall"] >= 4}
    for name in ("bulk_5M", "short_100k"):
        checks[f"{name} end to end faster than tcptrace (wall, medians)"] = _median(
            runs[("tcplens", name)], 0
        ) < _median(runs[("tcptrace", name)], 0)
    peak5 = max(r[2] for r in runs[("tcplens", "bulk_5M")])
    checks["memory <= 3x file size (5M)"] = peak5 <= 3 * size5
    if reference:
        for name in files:
            ours, theirs = runs[("tcplens", name)], runs[("reference", name)]
            per_round = sorted(a[0] / b[0] for a, b in zip(ours, theirs, strict=True))
            print(
                f"{name}: this tree / reference (wall) per round "
                f"{' '.join(f'{r:.2f}' for r in per_round)}: median {statistics.median(per_round):.2f}"
                f" (reference {_median(theirs, 0):.2f} s, peak {max(r[2] for r in theirs):.0f} MiB)"
            )
        ours, theirs = marginal("tcplens", 0), marginal("reference", 0)
        per_round = sorted(a / b for a, b in zip(ours, theirs, strict=True))
        print(
            f"marginal rate (wall), this tree / reference per round "
            f"{' '.join(f'{r:.2f}' for r in per_round)}: median {statistics.median(per_round):.2f}"
        )
    for what, ok in checks.items():
        print(f"  {'met ' if ok else 'MISSED'} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
