"""The model's small pure helpers: event bit names, CSR slices, derived columns."""

from __future__ import annotations

import numpy as np

from tcplens.tcp.model import (
    ACK_LOST_SEGMENT,
    EVENT_NAMES,
    KEEP_ALIVE_ACK,
    RETRANSMISSION,
    Flows,
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
        packets=i64,
        packets_c2s=i64,
        packets_s2c=i64,
        bytes_c2s=i64,
        bytes_s2c=i64,
        retransmissions_c2s=i64,
        retransmissions_s2c=i64,
        syn_ns=i64,
        synack_ns=i64,
        handshake_ack_ns=i64,
        handshake_syn_rtt_ns=np.array([10, -1, 5], np.int64),
        handshake_synack_rtt_ns=np.array([20, 7, -1], np.int64),
        rtt_min_ns=i64,
        rtt_median_ns=i64,
        rtt_p95_ns=i64,
        window_scale_client=np.array([7, -1, 0], np.int8),
        window_scale_server=np.array([7, -1, 0], np.int8),
        mss_client=np.full(n, 1460, np.int32),
        mss_server=np.full(n, 1460, np.int32),
        sack_permitted=np.ones(n, bool),
        timestamps=np.ones(n, bool),
        fin_seen=np.ones(n, bool),
        rst_seen=np.zeros(n, bool),
        vantage=np.zeros(n, np.uint8),
    )
    assert flows.handshake_rtt_ns.tolist() == [30, -1, -1]
    assert len(flows) == 3
