"""The whole reader against tshark, field by field, for every packet of the lab and PPA captures."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import NOT_TCP, PARSED, PacketTable
from tests.capture.shared_captures import LAB, PRACTICAL, Tshark, require, shared_files

CAPTURES = shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcapng")


def _ints(value: str) -> list[int]:
    return [int(v, 0) for v in value.split(",") if v]


def _epoch_ns(value: str) -> int:
    seconds, _, fraction = value.partition(".")
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])


def _address(row: np.ndarray) -> str:
    address = ipaddress.IPv6Address(row.tobytes())
    return str(address.ipv4_mapped or address)


def _tcp_rows(table: PacketTable) -> np.ndarray:
    return np.flatnonzero((table.status & (PARSED | NOT_TCP)) == PARSED)


def test_shared_captures_present() -> None:
    require(LAB)
    require(PRACTICAL)
    assert len(CAPTURES) >= 20


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_agrees_with_tshark(path: Path, tshark: Tshark) -> None:
    frames = tshark.frames(path)
    table = read_capture(path).packets
    assert len(table) == len(frames)
    assert table.frame.tolist() == [int(f["frame.number"]) for f in frames]
    assert table.ts_ns.tolist() == [_epoch_ns(f["frame.time_epoch"]) for f in frames]
    assert table.origlen.tolist() == [int(f["frame.len"]) for f in frames]
    assert table.caplen.tolist() == [int(f["frame.cap_len"]) for f in frames]

    tcp = [f for f in frames if f["tcp.srcport"]]
    rows = _tcp_rows(table)
    assert (rows + 1).tolist() == [int(f["frame.number"]) for f in tcp]
    expected: dict[str, list[Any]] = {
        "src": [f["ip.src"] or f["ipv6.src"] for f in tcp],
        "dst": [f["ip.dst"] or f["ipv6.dst"] for f in tcp],
        "src_port": [int(f["tcp.srcport"]) for f in tcp],
        "dst_port": [int(f["tcp.dstport"]) for f in tcp],
        "seq": [int(f["tcp.seq_raw"]) for f in tcp],
        "ack": [int(f["tcp.ack_raw"]) for f in tcp],
        "len": [int(f["tcp.len"]) for f in tcp],
        "window": [int(f["tcp.window_size_value"]) for f in tcp],
        "flags": [int(f["tcp.flags"], 16) for f in tcp],
        "hdr_len": [int(f["tcp.hdr_len"]) for f in tcp],
        "mss": [(_ints(f["tcp.options.mss_val"]) or [-1])[0] for f in tcp],
        "wscale": [(_ints(f["tcp.options.wscale.shift"]) or [-1])[0] for f in tcp],
        "sack_perm": [bool(f["tcp.options.sack_perm"]) for f in tcp],
        "sack_left": [_ints(f["tcp.options.sack_le"]) for f in tcp],
        "sack_right": [_ints(f["tcp.options.sack_re"]) for f in tcp],
        "ts_val": [(_ints(f["tcp.options.timestamp.tsval"]) or [0])[0] for f in tcp],
        "ts_ecr": [(_ints(f["tcp.options.timestamp.tsecr"]) or [0])[0] for f in tcp],
        "has_ts": [bool(f["tcp.options.timestamp.tsval"]) for f in tcp],
    }
    sack_count = table.sack_count[rows]
    actual: dict[str, list[Any]] = {
        "src": [_address(a) for a in table.addresses[table.src_id[rows]]],
        "dst": [_address(a) for a in table.addresses[table.dst_id[rows]]],
        "src_port": table.src_port[rows].tolist(),
        "dst_port": table.dst_port[rows].tolist(),
        "seq": table.tcp_seq[rows].tolist(),
        "ack": table.tcp_ack[rows].tolist(),
        "len": table.tcp_payload_len[rows].tolist(),
        "window": table.tcp_window[rows].tolist(),
        "flags": table.tcp_flags[rows].tolist(),
        "hdr_len": table.tcp_hdr_len[rows].tolist(),
        "mss": table.mss[rows].tolist(),
        "wscale": table.wscale[rows].tolist(),
        "sack_perm": table.sack_perm[rows].tolist(),
        "sack_left": [
            r[:c].tolist() for r, c in zip(table.sack_left[rows], sack_count, strict=True)
        ],
        "sack_right": [
            r[:c].tolist() for r, c in zip(table.sack_right[rows], sack_count, strict=True)
        ],
        "ts_val": table.ts_val[rows].tolist(),
        "ts_ecr": table.ts_ecr[rows].tolist(),
        "has_ts": table.has_ts[rows].tolist(),
    }
    for name, values in expected.items():
        mismatches = [
            (int(rows[k]) + 1, got, want)
            for k, (got, want) in enumerate(zip(actual[name], values, strict=True))
            if got != want
        ]
        assert not mismatches, f"{name}: (frame, reader, tshark) {mismatches[:5]}"
