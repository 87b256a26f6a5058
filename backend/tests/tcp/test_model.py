"""The model's small pure helpers: event bit names, CSR slices, derived columns."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tcplens.tcp.model import (
    ACK_LOST_SEGMENT,
    EVENT_NAMES,
    KEEP_ALIVE_ACK,
    RESENT_FLAG,
    RETRANSMISSION,
    SACK_COUNT_SHIFT,
    Flows,
    Segments,
    event_names,
)


def test_event_bits_follow_the_names() -> None:
    assert len(EVENT_NAMES) == 14
    assert event_names(RETRANSMISSION) == ["retransmission"]
    assert event_names(ACK_LOST_SEGMENT | KEEP_ALIVE_ACK) == ["ack_lost_segment", "keep_alive_ack"]
    assert event_names(0) == []


def test_handshake_rtt_is_unknown_when_either_half_is() -> None:
    n = 3
    i64 = np.array([1, 2, 3], dtype=np.int64)
    flows = Flows(
        id=i64,
        ip_version=np.full(n, 4, np.uint8),
        client_addr=np.zeros((n, 16), np.uint8),
        client_port=np.zeros(n, np.uint16),
        server_addr=np.zeros((n, 16), np.uint8),
        server_port=np.zeros(n, np.uint16),
        client_from_syn=np.ones(n, bool),
        first_frame=np.ones(n, np.uint32),
        start_ns=i64,
        end_ns=i64,
        duration_ns=i64,
        clock_steps=i64,
        packets_cut=i64,
        snaplen=i64,
        packets_missing=i64,
        timestamps_backwards=i64,
        packets=i64,
        packets_c2s=i64,
        packets_s2c=i64,
        bytes_c2s=i64,
        bytes_s2c=i64,
        retransmissions_c2s=i64,
        retransmissions_s2c=i64,
        data_first_ns_c2s=i64,
        data_first_ns_s2c=i64,
        data_last_ns_c2s=i64,
        data_last_ns_s2c=i64,
        first_syn_ns=i64,
        syn_ns=i64,
        synack_ns=i64,
        handshake_ack_ns=i64,
        handshake_syn_rtt_ns=np.array([10, -1, 5], np.int64),
        handshake_synack_rtt_ns=np.array([20, 7, -1], np.int64),
        rtt_min_ns=i64,
        rtt_median_ns=i64,
        rtt_p95_ns=i64,
        data_rtt_min_ns_c2s=i64,
        data_rtt_min_ns_s2c=i64,
        data_rtt_median_ns_c2s=i64,
        data_rtt_median_ns_s2c=i64,
        window_scale_client=np.array([7, -1, 0], np.int8),
        window_scale_server=np.array([7, -1, 0], np.int8),
        mss_client=np.full(n, 1460, np.int32),
        mss_server=np.full(n, 1460, np.int32),
        sack_permitted=np.ones(n, bool),
        timestamps=np.ones(n, bool),
        fin_seen=np.ones(n, bool),
        rst_seen=np.zeros(n, bool),
        vantage=np.zeros(n, np.uint8),
        encapsulation=np.zeros(n, np.uint16),
    )
    assert flows.handshake_rtt_ns.tolist() == [30, -1, -1]
    assert len(flows) == 3


def _segments(offsets: list[int]) -> Segments:
    """Segments with only ``offsets`` meaningful (every column zeros of its type)."""
    n = offsets[-1]
    columns = {
        "frame": np.uint32, "time_ns": np.int64, "seq": np.int32, "payload_len": np.int32,
        "ack": np.int32, "window": np.int32, "flags": np.uint16, "events": np.uint16,
        "bytes_in_flight": np.int32,
    }  # fmt: skip
    arrays: dict[str, Any] = {name: np.zeros(n, t) for name, t in columns.items()}
    arrays["frame"] = np.arange(1, n + 1, dtype=np.uint32)
    blocks: dict[str, Any] = {
        f: np.zeros(0, np.uint32) for f in ("sack_block_row", "sack_block_left", "sack_block_right")
    }
    return Segments(
        offsets=np.array(offsets, np.int64),
        isn=np.zeros(((len(offsets) - 1) // 2, 2), np.uint32),
        **arrays,
        **blocks,
    )


def test_flow_and_direction_come_from_the_offsets() -> None:
    # flow 0: 2 client packets, none from the server; flow 1: none from the client, 3 from the
    # server; flow 2: 1 and 1
    seg = _segments([0, 2, 2, 2, 5, 6, 7])
    rows = np.arange(7)
    assert seg.flow_of(rows).tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert seg.direction_of(rows).tolist() == [0, 0, 1, 1, 1, 0, 1]
    assert seg.flow_column().tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert seg.direction_column().tolist() == [0, 0, 1, 1, 1, 0, 1]
    assert seg.flow_of(np.array([6, 0])).tolist() == [2, 0]  # any order


def test_sack_edges_are_relative_to_the_isn_like_ack() -> None:
    # flow 0 holds only server -> client ACKs (relative to the client's ISN, 2**32 - 50: raw
    # numbers wrap); the packet table's rows 0..2 are Segments rows 2, 0, 1 (frame), and the
    # blocks are the table's entries, in capture order and raw as sent
    isn = 2**32 - 50
    seg = dataclasses.replace(
        _segments([0, 0, 3]),
        frame=np.array([2, 3, 1], np.uint32),
        ack=np.array([1, 101, 201], np.int32),
        flags=np.array(
            [0x10, 0x10 | 2 << SACK_COUNT_SHIFT, 0x10 | 1 << SACK_COUNT_SHIFT], np.uint16
        ),
        isn=np.array([[isn, 7]], np.uint32),
        # row 0 (Segments row 2): one block, a D-SACK below its ack; row 1 (Segments row 0):
        # none; row 2 (Segments row 1): two, in the order sent
        sack_block_row=np.array([0, 2, 2], np.uint32),
        sack_block_left=(isn + np.array([101, 1101, 3101])).astype(np.uint32),
        sack_block_right=(isn + np.array([201, 2101, 4101])).astype(np.uint32),
    )
    assert seg.sack_rows().tolist() == [1, 1, 2]
    assert seg.sack_left_from_ack.tolist() == [1000, 3000, -100]
    assert seg.sack_right_from_ack.tolist() == [2000, 4000, 0]
    left, right = seg.sack_edges()
    assert left.tolist() == [1101, 3101, 101] and right.tolist() == [2101, 4101, 201]


def test_flags_carry_the_sack_count_and_re_sent_bit_above_the_tcp_flags() -> None:
    flags = [0x18, 0x18 | RESENT_FLAG | 4 << SACK_COUNT_SHIFT, 0x110 | 3 << SACK_COUNT_SHIFT]
    seg = dataclasses.replace(_segments([0, 3, 3]), flags=np.array(flags, np.uint16))
    assert seg.resent.tolist() == [False, True, False]
    assert seg.sack_count.tolist() == [0, 4, 3]
    assert seg.tcp_flags.tolist() == [0x18, 0x18, 0x110]  # NS (0x100) is a TCP flag
