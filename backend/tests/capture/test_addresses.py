"""Addresses as ids: dense, in order of first appearance, the same however the rows are split."""

from __future__ import annotations

import io
import ipaddress

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import PacketTable
from tests.capture.builders import Packet, ethernet, ipv4, ipv6, pcap_file, tcp

ARP = ethernet(bytes(28), ethertype=0x0806)


def _frames() -> tuple[list[bytes], list[tuple[str, str]]]:
    """Many conversations over 300 addresses (v4 and v6), some ARP in between."""
    rng = np.random.default_rng(7)
    v4 = [f"10.{k // 250}.{k % 250}.1" for k in range(200)]
    v6 = [f"2001:db8::{k:x}" for k in range(1, 101)]
    frames, pairs = [], []
    for k in range(3000):
        if k % 97 == 0:
            frames.append(ARP)
            pairs.append(("::", "::"))
            continue
        if rng.random() < 0.7:
            a, b = rng.choice(v4, 2, replace=False)
            frames.append(ethernet(ipv4(a, b, 6, tcp(1000 + k % 50, 80, k, 0, 0x10, 100))))
        else:
            a, b = rng.choice(v6, 2, replace=False)
            frames.append(ethernet(ipv6(a, b, 6, tcp(1000, 80, k, 0, 0x10, 100)), 0x86DD))
        pairs.append((str(a), str(b)))
    return frames, pairs


def _text(table: PacketTable, ids: np.ndarray) -> list[str]:
    out = []
    for row in table.addresses[ids]:
        address = ipaddress.IPv6Address(row.tobytes())
        out.append(str(address.ipv4_mapped or address))
    return out


@pytest.mark.parametrize(("chunk", "parts"), [(1 << 17, 8), (37, 3), (1, 1)])
def test_ids_follow_first_appearance(
    chunk: int, parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcplens.capture import reader

    monkeypatch.setattr(reader, "DECODE_CHUNK", chunk)
    monkeypatch.setattr(reader, "_PARTS", parts)
    frames, pairs = _frames()
    table = read_capture(io.BytesIO(pcap_file([Packet(k, f) for k, f in enumerate(frames)])))
    packets = table.packets
    assert _text(packets, packets.src_id) == [a for a, _ in pairs]
    assert _text(packets, packets.dst_id) == [b for _, b in pairs]
    expected: dict[str, int] = {"::": 0}  # source before destination, in packet order
    for a, b in pairs:
        expected.setdefault(a, len(expected))
        expected.setdefault(b, len(expected))
    assert _text(packets, np.arange(len(packets.addresses))) == list(expected)
    assert packets.addresses.shape == (301, 16)
