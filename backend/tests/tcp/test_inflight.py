"""Bytes in flight and window headroom on scripted transfers and the shared captures."""

from __future__ import annotations

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import ACK, PSH
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import UNKNOWN, WINDOW_FULL
from tcplens.tcp.window import window_headroom
from tests.capture.shared_captures import LAB, PRACTICAL, shared_files
from tests.tcp.synthetic import Seg, handshake, table

MSS = 1000


def in_flight(segs: list[Seg]) -> dict[int, int]:
    s = analyze_tcp(table(segs)).segments
    return {int(f): int(b) for f, b in zip(s.frame, s.bytes_in_flight, strict=True) if b >= 0}


def test_in_flight_grows_with_each_segment_and_drops_with_acks() -> None:
    segs = handshake()
    segs += [
        Seg(20 + i * 0.1, True, 1 + i * MSS, ack=1, length=MSS, flags=ACK | PSH) for i in range(4)
    ]
    segs += [Seg(30, False, 1, ack=2 * MSS + 1, window=500)]  # frame 8 acks two segments
    segs += [Seg(30.1, True, 1 + 4 * MSS, ack=1, length=MSS)]  # frame 9
    assert in_flight(segs) == {4: 1000, 5: 2000, 6: 3000, 7: 4000, 9: 3000}


def test_sacked_bytes_are_not_in_flight() -> None:
    segs = handshake()
    segs += [Seg(20 + i * 0.1, True, 1 + i * MSS, ack=1, length=MSS) for i in range(4)]
    # segment 1 lost: the receiver holds 1001..4001 and says so in a SACK block
    segs += [Seg(30, False, 1, ack=1, window=500, sacks=[(MSS + 1, 4 * MSS + 1)])]  # frame 8
    segs += [Seg(30.1, True, 1 + 4 * MSS, ack=1, length=MSS)]  # frame 9: 5000 sent, 3000 held
    assert in_flight(segs)[9] == 2000


def test_dsack_below_the_ack_is_not_subtracted_unlike_wireshark() -> None:
    """RFC 2883: a D-SACK block reports a duplicate that arrived *below* the cumulative ACK.

    Those bytes were acknowledged already, so they were never part of what is in flight;
    Wireshark 4.0 subtracts every SACK block of the peer's last ACK and would report
    3000 - 1000 = 2000 here. We clip blocks to the unacknowledged range and keep 3000.
    """
    segs = handshake()
    segs += [Seg(20 + i * 0.1, True, 1 + i * MSS, ack=1, length=MSS) for i in range(2)]
    segs += [Seg(300, True, 1, ack=1, length=MSS)]  # frame 6: needless retransmission
    segs += [Seg(310, False, 1, ack=2 * MSS + 1, window=500)]  # frame 7
    segs += [Seg(320, False, 1, ack=2 * MSS + 1, window=500, sacks=[(1, MSS + 1)])]  # D-SACK
    segs += [Seg(321 + i * 0.1, True, 1 + (2 + i) * MSS, ack=1, length=MSS) for i in range(3)]
    got = in_flight(segs)
    assert got[11] == 3000


def test_headroom_is_right_edge_minus_segment_end() -> None:
    segs = handshake(wscale=2)  # windows x 4
    segs += [Seg(15, False, 1, ack=1, window=1000)]  # frame 4: 4000 bytes from ack 1
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(20.1, True, 1 + MSS, ack=1, length=MSS)]
    a = analyze_tcp(table(segs))
    s = a.segments
    data = s.payload_len > 0
    assert window_headroom(s, a.flows)[data].tolist() == [3000, 2000]
    assert s.window[s.frame == 4].tolist() == [4000]


def test_headroom_without_the_handshake_is_unknown() -> None:
    segs = handshake(wscale=2)
    segs += [Seg(15, False, 1, ack=1, window=1000)]
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(20.1, True, 1 + MSS, ack=1, length=MSS)]
    a = analyze_tcp(table(segs[3:]))  # the scales were in the handshake
    assert a.flows.window_scale_client.tolist() == a.flows.window_scale_server.tolist() == [-1]
    assert window_headroom(a.segments, a.flows).tolist() == [UNKNOWN] * 3


@pytest.mark.parametrize(
    "path",
    shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcapng"),
    ids=lambda p: p.name,
)
def test_headroom_is_zero_exactly_at_the_window_full_segments(path) -> None:  # type: ignore[no-untyped-def]
    """The per-packet pass flags window_full (Wireshark's test: the segment ends at the peer's
    right edge) from its own state; the headroom is derived from the columns afterwards: they
    must agree on every segment, and the headroom must be known for every data segment of a
    flow whose handshake was captured unless the peer has not acknowledged anything yet."""
    a = analyze_tcp(read_capture(path).packets)
    seg = a.segments
    room = window_headroom(seg, a.flows)
    full = (seg.events & WINDOW_FULL) != 0
    assert np.array_equal(room == 0, full)
    data = (seg.payload_len > 0) & ((seg.flags & 0x07) == 0)
    known = room != UNKNOWN
    assert not np.any(known & ~data)
    if a.flows.window_scale_client.min() >= 0 and a.flows.window_scale_server.min() >= 0:
        assert np.count_nonzero(known) >= 0.9 * np.count_nonzero(data)
