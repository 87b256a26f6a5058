"""Flow grouping: ids in order of first packet, client by SYN, port reuse, relative numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplens.capture import read_capture
from tcplens.capture.table import ACK, FIN, SYN
from tcplens.tcp.analyze import analyze_tcp
from tests.capture.shared_captures import LAB, PRACTICAL, shared_files
from tests.tcp.synthetic import CLIENT, SERVER, Seg, handshake, table

OTHER = (bytes([0] * 10 + [0xFF, 0xFF, 10, 0, 0, 3]), 5555)


def test_ids_follow_first_packet_and_client_is_the_syn_sender() -> None:
    segs = [Seg(0, False, 1, ack=1, length=10, src=OTHER, dst=CLIENT)]  # mid-stream flow first
    segs += handshake(t0=1)
    a = analyze_tcp(table(segs))
    f = a.flows
    assert f.id.tolist() == [1, 2]
    assert f.first_frame.tolist() == [1, 2]
    assert f.client_port.tolist() == [5555, 40000]  # no SYN: the first sender is the client
    assert f.client_from_syn.tolist() == [False, True]
    assert f.window_scale_client.tolist() == [-1, 7]  # unknown stays unknown, never 0


def test_a_capture_starting_at_the_synack_names_its_receiver_the_client() -> None:
    """DESIGN.md: no SYN seen, the receiver of the first SYN/ACK is the client — also for its
    address and port, although the flow's first packet is the server's."""
    segs = [
        Seg(0, False, 0, ack=1, flags=SYN | ACK, window=65160, mss=1460),
        Seg(10, True, 1, ack=1),
        Seg(11, True, 1, ack=1, length=100),
    ]
    f = analyze_tcp(table(segs)).flows
    assert f.client_port.tolist() == [CLIENT[1]]
    assert f.server_port.tolist() == [SERVER[1]]
    assert bytes(f.client_addr[0]) == CLIENT[0]
    assert bytes(f.server_addr[0]) == SERVER[0]
    assert (f.packets_c2s.tolist(), f.bytes_c2s.tolist()) == ([2], [100])
    assert f.client_from_syn.tolist() == [True]
    only_server = analyze_tcp(table(segs[:1])).flows  # nothing from the client at all
    assert (only_server.client_port.tolist(), only_server.server_port.tolist()) == ([40000], [80])


def test_syn_with_a_new_isn_on_a_reused_port_pair_starts_a_new_flow() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=100), Seg(30, False, 1, ack=101)]
    segs += [
        Seg(40, True, 101, ack=1, flags=ACK | FIN),
        Seg(50, False, 1, ack=102, flags=ACK | FIN),
    ]
    segs += [Seg(60, True, 102, ack=2)]
    second = handshake(t0=5000, isn=(777_000, 888_000))  # same ports, new ISNs
    segs += second
    a = analyze_tcp(table(segs))
    assert len(a.flows) == 2
    assert a.flows.first_frame.tolist() == [1, 9]
    assert a.flows.bytes_c2s.tolist() == [100, 0]
    # a retransmitted SYN (same ISN) is not a new connection
    again = handshake()
    again.insert(1, Seg(1000, True, 0, flags=SYN, window=64240, mss=1460, wscale=7))
    assert len(analyze_tcp(table(again)).flows) == 1


def test_relative_sequence_numbers_across_the_32_bit_wrap() -> None:
    isn = (2**32 - 1500, 5000)
    segs = handshake(isn=isn)
    segs += [Seg(20 + i, True, 1 + i * 1000, ack=1, length=1000, isn=isn) for i in range(3)]
    segs += [Seg(30, False, 1, ack=3001, isn=isn)]
    a = analyze_tcp(table(segs))
    s = a.segments
    c2s = s.slice_of(0, 0)
    assert s.seq[c2s].tolist() == [0, 1, 1, 1001, 2001]
    assert s.ack[s.slice_of(0, 1)].tolist()[-1] == 3001
    assert a.flows.bytes_c2s.tolist() == [3000]
    assert SERVER[1] == a.flows.server_port[0]


def test_segments_of_64_kib_and_more_keep_their_whole_length() -> None:
    # TSO/GRO super-frames captured on the sending host: their 16-bit payload column holds
    # LONG_LENGTH and the table's long entry the length (PacketTable); frames 5 and 6 around them
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=70_000), Seg(20.1, True, 70_001, ack=1, length=65_535)]
    segs += [Seg(20.2, True, 135_536, ack=1, length=100), Seg(30, False, 1, ack=135_636)]
    a = analyze_tcp(table(segs))
    s = a.segments
    assert s.payload_len[s.slice_of(0, 0)].tolist() == [0, 0, 70_000, 65_535, 100]
    assert s.seq[s.slice_of(0, 0)].tolist() == [0, 1, 1, 70_001, 135_536]
    assert a.flows.bytes_c2s.tolist() == [135_635]
    assert s.events.tolist() == [0] * len(s)  # in order, nothing lost: no analysis flag


# no deadline: the first example may wait for the compiled kernels on a busy machine
@settings(deadline=None, max_examples=50)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 2**31 - 1), min_size=1, max_size=30))
def test_sequence_numbers_unwrap_across_any_number_of_wraps(isn: int, steps: list[int]) -> None:
    """RFC 1982: each step below 2**31 is read as forward, so relative numbers keep growing."""
    segs = [Seg(0, True, 0, flags=SYN, isn=(isn, 5000))]
    offset = 0
    for i, step in enumerate(steps):
        offset += step
        segs.append(Seg(1 + i, True, offset, length=0, isn=(isn, 5000)))
    s = analyze_tcp(table(segs)).segments
    expected = [0, *np.cumsum(steps).tolist()]
    assert s.unwrapped_seq().tolist() == expected
    assert (s.seq.view(np.uint32) == np.array(expected) % 2**32).all()  # stored in 32 bits


def test_thousands_of_connections_keep_first_packet_order() -> None:
    """More connections than the flow tables start with (they grow and rehash)."""
    n = 3000
    segs = [
        Seg(i * 0.01, True, 0, flags=SYN, src=(CLIENT[0], 1024 + (i * 7919) % 60000))
        for i in range(n)
    ]
    segs += [Seg(100, True, 0, flags=SYN, src=(CLIENT[0], 1024))]  # retransmitted first SYN
    f = analyze_tcp(table(segs)).flows
    assert len(f) == n
    assert f.first_frame.tolist() == list(range(1, n + 1))
    assert f.client_port.tolist() == [1024 + (i * 7919) % 60000 for i in range(n)]
    assert f.packets[0] == 2


def test_data_times_per_direction_and_the_first_pure_syn() -> None:
    """Flows keeps each direction's earliest and latest data segment (min/max: the clock may
    step back) and the client's first SYN without ACK (a retransmitted SYN counts from the
    first), so the report and the diagnosis need no pass over every segment."""
    segs = [Seg(0, True, 0, flags=SYN, window=64240, mss=1460)]  # first SYN, then handshake()'s
    segs += handshake(t0=5)
    segs += [Seg(30, True, 1, ack=1, length=100), Seg(25, True, 101, ack=1, length=50)]
    segs += [Seg(40, False, 1, ack=151, length=10), Seg(50, True, 151, ack=11)]
    segs += [Seg(60, False, 0, flags=SYN, src=OTHER, dst=CLIENT)]  # only a peer's SYN, no data
    f = analyze_tcp(table(segs)).flows
    ns = [1_700_000_000_000_000_000 + int(t * 1e6) for t in (0, 25, 30, 40, 60)]
    assert f.first_syn_ns.tolist() == [ns[0], ns[4]]
    assert f.data_first_ns_c2s.tolist() == [ns[1], -1]  # the earliest, not the first captured
    assert f.data_last_ns_c2s.tolist() == [ns[2], -1]
    assert f.data_first_ns_s2c.tolist() == [ns[3], -1]
    assert f.data_last_ns_s2c.tolist() == [ns[3], -1]


@pytest.mark.parametrize(
    "path", shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcap*"), ids=lambda p: p.name
)
def test_data_times_and_first_syn_are_those_of_the_segments(path) -> None:  # type: ignore[no-untyped-def]
    """Flows' per-direction data times and first pure SYN equal a direct reading of Segments."""
    a = analyze_tcp(read_capture(path).packets)
    f, seg = a.flows, a.segments
    for k in range(2 * len(f)):
        rows = slice(int(seg.offsets[k]), int(seg.offsets[k + 1]))
        data = seg.time_ns[rows][seg.payload_len[rows] > 0]
        first = f.data_first_ns_c2s if k % 2 == 0 else f.data_first_ns_s2c
        last = f.data_last_ns_c2s if k % 2 == 0 else f.data_last_ns_s2c
        expected = (int(data.min()), int(data.max())) if data.size else (-1, -1)
        assert (int(first[k // 2]), int(last[k // 2])) == expected
    for i in range(len(f)):
        rows = slice(int(seg.offsets[2 * i]), int(seg.offsets[2 * i + 2]))  # client's rows first
        syn = seg.time_ns[rows][(seg.flags[rows] & (SYN | ACK)) == SYN]
        assert int(f.first_syn_ns[i]) == (int(syn[0]) if syn.size else -1)


@pytest.mark.parametrize(
    "path", shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcapng"), ids=lambda p: p.name
)
def test_capture_start_is_the_earliest_packet_whoever_computes_it(path) -> None:  # type: ignore[no-untyped-def]
    """The report passes the reader's first timestamp (no pass over every packet's time); it is
    the earliest packet's time, as analyze_tcp finds it on its own."""
    capture = read_capture(path)
    earliest = int(capture.packets.ts_ns.min())
    assert capture.info.first_ts_ns == earliest
    assert analyze_tcp(capture.packets).capture_start_ns == earliest
    assert analyze_tcp(capture.packets, capture.info.first_ts_ns).capture_start_ns == earliest
