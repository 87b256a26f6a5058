"""Where the shared captures are, and tshark's view of them (run once per file per session)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SHARED_CAPTURES = PROJECT_ROOT.parent / "shared" / "captures"
LAB = SHARED_CAPTURES / "lab"
PRACTICAL = SHARED_CAPTURES / "corpus" / "practical-packet-analysis"
TCPDUMP_TESTS = SHARED_CAPTURES / "corpus" / "tcpdump-tests"

# Fields compared with the reader; raw sequence numbers so SACK edges are absolute too
TSHARK_FIELDS = (
    "frame.number", "frame.time_epoch", "frame.len", "frame.cap_len",
    "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
    "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.len",
    "tcp.window_size_value", "tcp.flags", "tcp.hdr_len",
    "tcp.options.mss_val", "tcp.options.wscale.shift", "tcp.options.sack_perm",
    "tcp.options.sack_le", "tcp.options.sack_re",
    "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr",
)  # fmt: skip


def shared_files(folder: Path, pattern: str = "*") -> list[Path]:
    """The captures in a shared folder, or an empty list (tests using it then skip)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def require(path: Path) -> None:
    """Skip the test when a shared folder or capture is absent (CI always has them)."""
    if not path.exists():
        pytest.skip(f"shared captures not found at {path} (CI always has them)")


class Tshark:
    """tshark's field values per frame for a capture, run once per file per session."""

    def __init__(self) -> None:
        self._cache: dict[Path, list[dict[str, str]]] = {}

    def frames(self, capture: Path) -> list[dict[str, str]]:
        if capture not in self._cache:
            command = [
                "tshark",
                "-n",
                "-r",
                str(capture),
                "-o",
                "tcp.relative_sequence_numbers:FALSE",
            ]
            command += ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]
            for name in TSHARK_FIELDS:
                command += ["-e", name]
            out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
            rows = [
                dict(zip(TSHARK_FIELDS, line.split("\t"), strict=True))
                for line in out.stdout.splitlines()
            ]
            self._cache[capture] = rows
        return self._cache[capture]
