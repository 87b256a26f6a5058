"""Packet times that jump (issue 27 part 4): one capture warning with the frames and the size of
each jump; no RTT sample spans one."""

from __future__ import annotations

import io

from tcplens.capture import read_capture
from tcplens.capture.clock import BACK_NS, JUMP_NS
from tcplens.capture.table import ACK, PSH, SYN, Capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import RTT_DATA_ACK
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
HOUR = 3600 * 10**9
C, S = "10.1.0.1", "10.2.0.2"


def _connection() -> list[bytes]:
    """Handshake, 300 bytes up and their ACK, 300 more and their ACK."""

    def up(ident: int, seq: int, ack: int, flags: int, data: bytes = b"") -> bytes:
        return ethernet(
            ipv4(C, S, 6, tcp(40000, 80, seq, ack, flags, 64000, payload=data), ident=ident)
        )

    def down(ident: int, seq: int, ack: int, flags: int) -> bytes:
        return ethernet(ipv4(S, C, 6, tcp(80, 40000, seq, ack, flags, 64000), ident=ident))

    return [
        up(1, 100, 0, SYN),
        down(2, 500, 101, SYN | ACK),
        up(3, 101, 501, ACK),
        up(4, 101, 501, ACK | PSH, b"u" * 300),
        down(5, 501, 401, ACK),
        up(6, 401, 501, ACK | PSH, b"u" * 300),
        down(7, 501, 701, ACK),
    ]


def _read(times_ns: list[int]) -> Capture:
    packets = [Packet(T0 + t, f) for t, f in zip(times_ns, _connection(), strict=True)]
    return read_capture(io.BytesIO(pcap_file(packets)))


def _data_ack_samples(capture: Capture) -> list[tuple[int, float]]:
    rtt = analyze_tcp(capture.packets).rtt
    sel = (rtt.kind == RTT_DATA_ACK) & (rtt.frame > 3)
    return [(int(f), x / MS) for f, x in zip(rtt.frame[sel], rtt.rtt_ns[sel], strict=True)]


def test_steady_times_give_no_warning_and_every_sample() -> None:
    capture = _read([0, 10 * MS, 11 * MS, 20 * MS, 30 * MS, 40 * MS, 50 * MS])
    assert capture.info.warnings == ()
    assert capture.packets.clock_step_rows.tolist() == []
    assert _data_ack_samples(capture) == [(5, 10.0), (7, 10.0)]


def test_a_jump_forward_inside_a_flow_is_named_and_spans_no_sample() -> None:
    """Two files spliced, or a seconds field off by 2^16: the ACK of frame 6's data comes 18.2
    hours later (issue 27: RTTs of 65,536,000 ms)."""
    jump = 65_536 * 10**9
    capture = _read([0, 10 * MS, 11 * MS, 20 * MS, 30 * MS, 40 * MS, 40 * MS + jump])
    assert capture.info.warnings == (
        "Packet times jump at 1 place: frame 7 is 18.2 h after frame 6 (spliced captures or a "
        "clock step?); no time across a jump is taken as a round trip.",
    )
    assert capture.packets.clock_step_rows.tolist() == [6]
    assert _data_ack_samples(capture) == [(5, 10.0)]
    flows = analyze_tcp(capture.packets).flows
    assert flows.rtt_median_ns.tolist() == [11 * MS]  # the handshake halves: 10 + 1 ms


def test_a_step_back_is_named() -> None:
    """A clock stepped back 5 s (NTP steps beyond 128 ms): the SYN/ACK → ACK half across it is
    no handshake time."""
    capture = _read([0, 10 * MS, 10 * MS - 5 * 10**9, 20 * MS, 30 * MS, 40 * MS, 50 * MS])
    assert capture.info.warnings == (
        "Packet times jump at 1 place: frame 3 is 5.0 s before frame 2 (spliced captures or a "
        "clock step?); no time across a jump is taken as a round trip.",
    )
    flows = analyze_tcp(capture.packets).flows
    assert flows.handshake_syn_rtt_ns.tolist() == [10 * MS]
    assert flows.handshake_synack_rtt_ns.tolist() == [-1]


def test_small_steps_are_not_jumps() -> None:
    """Interfaces merged out of order by less than a second, a capture quiet for under an hour."""
    times = [0, 10 * MS, 11 * MS, 20 * MS, 20 * MS + JUMP_NS - 1, 30 * MS + JUMP_NS]
    times += [30 * MS + JUMP_NS - BACK_NS + 1000]
    assert _read(times).info.warnings == ()


def test_many_jumps_are_summed_up() -> None:
    capture = _read([k * 2 * HOUR for k in range(7)])
    assert capture.info.warnings[0].startswith(
        "Packet times jump at 6 places: frame 2 is 2.0 h after frame 1, frame 3 is 2.0 h after "
        "frame 2, frame 4 is 2.0 h after frame 3 and 3 more"
    )
    assert analyze_tcp(capture.packets).rtt.rtt_ns.tolist() == []
