"""Wireshark's tcp.analysis flags on small scripted exchanges (frame numbers are asserted)."""

from __future__ import annotations

from tcplens.capture.table import ACK, FIN, PSH, RST
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import event_names
from tcplens.tcp.window import window_headroom
from tests.tcp.synthetic import Seg, handshake, table

MSS = 1000


def flagged(segs: list[Seg]) -> dict[int, list[str]]:
    a = analyze_tcp(table(segs))
    s = a.segments
    return {int(f): event_names(int(e)) for f, e in zip(s.frame, s.events, strict=True) if e}


def test_three_duplicate_acks_then_fast_retransmission() -> None:
    segs = handshake()  # frames 1-3, RTT 10 ms
    segs += [
        Seg(20 + i * 0.1, True, 1 + i * MSS, ack=1, length=MSS, flags=ACK | PSH) for i in range(5)
    ]
    # segment 1 (frame 4) lost after the capture point: the receiver acks 1 four times
    segs += [Seg(30 + i * 0.1, False, 1, ack=1, window=500) for i in range(4)]  # frames 9-12
    segs += [Seg(30.5, True, 1, ack=1, length=MSS)]  # frame 13
    segs += [Seg(40.6, False, 1, ack=5 * MSS + 1, window=500)]  # frame 14
    got = flagged(segs)
    assert got == {
        9: ["window_update"],  # same ACK as the SYN/ACK with a new window, as Wireshark says
        10: ["duplicate_ack"],
        11: ["duplicate_ack"],
        12: ["duplicate_ack"],
        13: ["retransmission", "fast_retransmission"],
    }


def test_late_copy_is_a_retransmission_and_quick_one_out_of_order() -> None:
    segs = handshake(rtt_ms=10)
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(20.1, True, 1 + MSS, ack=1, length=MSS)]
    segs += [Seg(20.2, True, 1 + 2 * MSS, ack=1, length=MSS)]  # frame 6
    segs += [Seg(20.25, True, 1 + MSS, ack=1, length=MSS)]  # 0.05 ms after the highest: OOO
    segs += [Seg(300, True, 1, ack=1, length=MSS)]  # long after, nothing acked: RTO retransmission
    segs += [Seg(310, False, 1, ack=3 * MSS + 1)]
    segs += [Seg(320, True, 1, ack=1, length=MSS)]  # already acknowledged: spurious
    got = flagged(segs)
    assert got == {
        7: ["out_of_order"],
        8: ["retransmission"],
        10: ["retransmission", "spurious_retransmission"],
    }


def test_window_full_needs_the_exact_right_edge_and_a_known_scale() -> None:
    segs = handshake(wscale=7)
    segs += [Seg(15, False, 1, ack=1, window=16)]  # frame 4: 2048 bytes of window from ack 1
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(20.1, True, 1 + MSS, ack=1, length=MSS)]
    segs += [Seg(20.2, True, 1 + 2 * MSS, ack=1, length=48)]  # ends at 2049 = 1 + 2048
    got = flagged(segs)
    assert got == {4: ["window_update"], 7: ["window_full"]}
    a = analyze_tcp(table(segs))
    assert window_headroom(a.segments, a.flows)[a.segments.frame == 6].tolist() == [48]
    # without the handshake the scale is unknown: Wireshark stays silent, and so do we
    got_mid = flagged(segs[3:])
    assert got_mid == {}


def test_zero_window_probe_and_its_ack_then_window_update() -> None:
    segs = handshake(wscale=0)
    segs += [Seg(20, True, 1, ack=1, length=MSS)]  # frame 4
    segs += [Seg(30, False, 1, ack=MSS + 1, window=0)]  # frame 5: zero window
    segs += [Seg(230, True, MSS + 1, ack=1, length=1)]  # frame 6: probe
    segs += [Seg(240, False, 1, ack=MSS + 1, window=0)]  # frame 7: probe ack (still zero)
    segs += [Seg(400, False, 1, ack=MSS + 1, window=4000)]  # frame 8: window update
    got = flagged(segs)
    assert got == {
        5: ["zero_window"],
        6: ["zero_window_probe"],
        7: ["zero_window", "zero_window_probe_ack"],
        8: ["window_update"],
    }
    a = analyze_tcp(table(segs))
    z = a.zero_windows
    assert (z.start_frame.tolist(), z.end_frame.tolist(), z.reopened.tolist()) == ([5], [8], [True])
    assert z.direction.tolist() == [1]


def test_keep_alive_and_its_ack() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=100), Seg(30, False, 1, ack=101, window=700)]
    segs += [Seg(7200_000, True, 100, ack=1, length=0)]  # frame 6: one byte before next seq
    segs += [Seg(7200_010, False, 1, ack=101, window=700)]  # frame 7
    assert flagged(segs) == {6: ["keep_alive"], 7: ["keep_alive_ack"]}


def test_gap_in_the_capture_and_ack_of_unseen_data() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=MSS)]  # frame 4
    segs += [Seg(20.2, True, 1 + 2 * MSS, ack=1, length=MSS)]  # frame 5: 1001..2001 not captured
    segs += [Seg(40, False, 1, ack=3 * MSS + 1, window=500)]  # frame 6 acks the unseen segment
    got = flagged(segs)
    assert got == {5: ["lost_segment"], 6: ["ack_lost_segment"]}


def test_ack_of_unseen_data_is_flagged_once_per_missing_stretch() -> None:
    """TShark 4.0.17 on this exchange (built as a pcap) flags frame 7 only: after the flag the
    data sender's highest contiguous sequence number moves to its nextseq, so the later ACKs
    beyond the hole, and the ACKs carried by the receiver's own data after the sender's ACK
    changed (frames 12, 14, 16), are not flagged again (issue 27: thousands of such flags)."""
    segs = handshake()  # frames 1-3
    segs += [Seg(30, True, 1, ack=1, length=100)]  # 4
    segs += [Seg(31, True, 201, ack=1, length=100)]  # 5: 101..201 not captured
    segs += [Seg(40, False, 1, ack=101), Seg(41, False, 1, ack=301)]  # 6, 7: acks the hole
    segs += [Seg(50, True, 301, ack=1, length=100)]  # 8
    segs += [Seg(60, False, 1, ack=401), Seg(70, False, 1, ack=401, length=50)]  # 9, 10
    segs += [Seg(80, True, 401, ack=51), Seg(90, False, 51, ack=401, length=50)]  # 11, 12
    segs += [Seg(95, True, 401, ack=101), Seg(100, False, 101, ack=401, length=50)]  # 13, 14
    segs += [Seg(110, True, 401, ack=151, length=100), Seg(120, False, 151, ack=501)]  # 15, 16
    got = flagged(segs)
    assert got == {5: ["lost_segment"], 7: ["ack_lost_segment"]}


def test_ack_of_unseen_data_is_flagged_again_only_after_a_new_hole_or_ack() -> None:
    """Three more exchanges as TShark 4.0.17 flags them. The server's data is never captured:
    only the first ACK beyond it is flagged (arkime's aerospike.pcap, frames 5-8). Then: a new
    hole in the server's segments (frame 8) or a change of its ACK (frame 13) lets the next ACK
    beyond be flagged again, its duplicate ACK (frame 10) does not. Last (pcapplusplus's
    ldap.pcapng, frames 11-12): the client's own segments leave a hole; the server's first ACK
    beyond it is flagged for the hole, its second once more, its third not."""
    segs = handshake()  # frames 1-3
    segs += [Seg(30, True, 1, ack=1, length=43), Seg(31, True, 44, ack=84)]  # 4, 5
    segs += [Seg(32, True, 44, ack=85), Seg(33, True, 44, ack=200)]  # 6, 7
    assert flagged(segs) == {5: ["ack_lost_segment"]}
    segs = handshake()
    segs += [Seg(30, False, 1, ack=1, length=100), Seg(31, True, 1, ack=101)]  # 4, 5
    segs += [Seg(32, True, 1, ack=300), Seg(33, True, 1, ack=301)]  # 6, 7
    segs += [Seg(34, False, 301, ack=1, window=900), Seg(35, True, 1, ack=401)]  # 8, 9
    segs += [Seg(36, False, 301, ack=1, window=900), Seg(37, True, 1, ack=500)]  # 10, 11
    segs += [Seg(38, True, 1, ack=500, length=10)]  # 12
    segs += [Seg(39, False, 301, ack=11, window=900), Seg(40, True, 11, ack=600)]  # 13, 14
    assert flagged(segs) == {
        6: ["ack_lost_segment"],
        8: ["lost_segment"],
        9: ["ack_lost_segment"],
        10: ["duplicate_ack"],
        14: ["ack_lost_segment"],
    }
    segs = handshake()
    segs += [Seg(30, True, 1, ack=1, length=80), Seg(31, True, 332, ack=1, length=228)]  # 4, 5
    segs += [Seg(32, False, 1, ack=1236, length=58), Seg(33, False, 59, ack=1353, length=191)]
    segs += [Seg(34, False, 250, ack=1400, length=10)]  # 8
    assert flagged(segs) == {5: ["lost_segment"], 6: ["ack_lost_segment"], 7: ["ack_lost_segment"]}


def test_copy_of_acknowledged_data_is_spurious_even_right_after_the_highest() -> None:
    """Wireshark 4.0 decides "spurious" (the peer acknowledged all of it) before fast
    retransmission and out-of-order: TShark 4.0.17 calls frame 7 a spurious retransmission,
    although it comes 0.5 ms after the highest segment, within the handshake RTT."""
    segs = handshake(rtt_ms=10)
    segs += [Seg(30, True, 1, ack=1, length=100), Seg(30.5, True, 101, ack=1, length=100)]
    segs += [Seg(30.7, False, 1, ack=201), Seg(31, True, 1, ack=1, length=100)]  # 6, 7
    got = flagged(segs)
    assert got == {7: ["retransmission", "spurious_retransmission"]}


def test_syn_fin_rst_are_never_window_or_dupack_events() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, flags=ACK | FIN)]
    segs += [Seg(30, False, 1, ack=2, flags=ACK | FIN)]
    segs += [Seg(40, True, 2, ack=2, window=0, flags=RST)]
    assert flagged(segs) == {}
