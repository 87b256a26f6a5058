"""Transfers built from a few numbers, for testing the labelling where a capture would hide the
case among others. Each builder states the situation it models; the arrays are what
``from_analysis`` would produce for it."""

from __future__ import annotations

import ipaddress

import numpy as np

from tcplens.diagnosis.context import Context
from tcplens.diagnosis.timeline import Intervals, LabelledTime, connection_intervals
from tcplens.diagnosis.transfer import Connection, FlowFacts, Transfer

SEG = 1000


def transfer(
    t: list[float] | np.ndarray,
    seq: list[int] | np.ndarray,
    length: list[int] | np.ndarray,
    ack_t: list[float] | np.ndarray,
    ack: list[int] | np.ndarray,
    window: list[int] | np.ndarray,
    *,
    lag_s: float = 0.0,
    mss: int = SEG,
    ack_payload: list[int] | None = None,
    rtt: tuple[list[float], list[float]] = ([], []),
) -> Transfer:
    t_a = np.asarray(t, np.float64)
    seq_a = np.asarray(seq, np.int64)
    len_a = np.asarray(length, np.int64)
    prior = np.concatenate(([-1], np.maximum.accumulate(seq_a + len_a)[:-1]))
    n, m = t_a.size, len(ack_t)
    frames = np.arange(1, n + m + 1, dtype=np.int64)
    return Transfer(
        flow=1,
        direction="client_to_server",
        sender="10.0.0.1:40000",
        receiver="10.0.0.2:80",
        mss=mss,
        window_scale=7,
        window_scale_inferred=False,
        lag_s=lag_s,
        t=t_a,
        frame=frames[:n],
        seq=seq_a,
        seq_end=seq_a + len_a,
        retransmission=seq_a < prior,
        ack_t=np.asarray(ack_t, np.float64),
        ack_frame=frames[n:],
        ack=np.asarray(ack, np.int64),
        window=np.asarray(window, np.int64),
        ack_payload=np.asarray(ack_payload if ack_payload else [0] * m, np.int64),
        rtt_t=np.asarray(rtt[0], np.float64),
        rtt_s=np.asarray(rtt[1], np.float64),
        echo_t=np.zeros(0),
        echo_s=np.zeros(0),
        zero_start=np.zeros(0),
        zero_end=np.zeros(0),
        zero_frames=np.zeros((0, 2), np.int64),
        zero_reopened=np.zeros(0, np.bool_),
    )


def window_rounds(
    rounds: int,
    per_round: int,
    rtt: float,
    windows: list[int] | None = None,
    ack_lead: float = 5e-5,
) -> Transfer:
    """A sender that sends ``per_round`` segments back to back each round trip and waits: the
    ACK for a round arrives just before the next round starts, advertising ``windows[r]``
    (default: exactly one round's worth — the window is the limit). The ACK arrives
    ``ack_lead`` seconds before the next round leaves."""
    r = np.repeat(np.arange(rounds), per_round)
    k = np.tile(np.arange(per_round), rounds)
    t = r * rtt + k * 1e-4
    seq = 1 + (r * per_round + k) * SEG
    # The first "ACK" is the handshake's, announcing the first window.
    ack_t = np.concatenate(([-rtt / 2], (np.arange(rounds) + 1) * rtt - ack_lead))
    ack = np.concatenate(([1], 1 + (np.arange(rounds) + 1) * per_round * SEG))
    win = np.asarray(windows if windows is not None else [per_round * SEG] * rounds, np.int64)
    win = np.concatenate((win[:1], win))
    return transfer(t, seq, np.full(t.size, SEG), ack_t, ack, win)


def slow_start(segments: int, rtt: float, window: int = 10**7) -> Transfer:
    """Textbook slow start seen at the sender: two segments, then every ACK (one per segment,
    one round trip after it left) releases two more at once."""
    sent = [0.0, 1e-5]
    ack_times: list[float] = []
    j = 0
    while len(sent) < segments:
        ack_at = sent[j] + rtt
        ack_times.append(ack_at)
        sent += [ack_at + 1e-6, ack_at + 2e-6]
        j += 1
    t = np.sort(np.asarray(sent[:segments]))  # segments leave in sequence order
    seq = 1 + np.arange(segments) * SEG
    ack_t = np.concatenate(([-rtt / 2], ack_times))
    ack = np.concatenate(([1], 1 + (np.arange(len(ack_times)) + 1) * SEG))
    return transfer(t, seq, np.full(segments, SEG), ack_t, ack, np.full(ack.size, window))


def connection(tr: Transfer, rtt: float) -> Connection:
    start = float(tr.t[0]) - rtt
    end = float(max(tr.t[-1], tr.ack_t[-1] if tr.ack_t.size else tr.t[-1]))
    return Connection(
        flow=1,
        client=tr.sender,
        server=tr.receiver,
        start_s=start,
        end_s=end,
        duration_s=end - start,
        syn_s=float(tr.t[0]) - rtt,
        established_s=float(tr.t[0]),
        handshake_rtt_s=rtt,
        first_frame=1,
        syn_frame=1,
        transfers=(tr,),
    )


def context(conns: list[Connection]) -> Context:
    """The rules' context for built connections (client 10.0.0.1, server 10.0.0.2:80)."""
    f = np.array
    n = len(conns)
    addr = np.frombuffer(ipaddress.IPv6Address("::ffff:10.0.0.1").packed, np.uint8)
    server = np.frombuffer(ipaddress.IPv6Address("::ffff:10.0.0.2").packed, np.uint8)
    facts = FlowFacts(
        id=f([c.flow for c in conns], np.int64),
        start_s=f([c.start_s for c in conns]),
        end_s=f([c.end_s for c in conns]),
        duration_s=f([c.duration_s for c in conns]),
        syn_s=f([c.syn_s if c.syn_s is not None else np.nan for c in conns]),
        established_s=f([c.established_s if c.established_s is not None else np.nan for c in conns]),
        handshake_rtt_s=f([c.handshake_rtt_s or np.nan for c in conns]),
        last_data_s=f([max((float(tr.t[-1]) for tr in c.transfers), default=np.nan) for c in conns]),
        payload=f([sum(tr.payload_bytes for tr in c.transfers) for c in conns], np.int64),
        first_frame=f([c.first_frame for c in conns], np.int64),
        client_addr=np.tile(addr, (n, 1)),
        client_port=np.arange(40000, 40000 + n, dtype=np.uint16),
        server_addr=np.tile(server, (n, 1)),
        server_port=np.full(n, 80, np.uint16),
    )  # fmt: skip
    spans = Intervals.concat([connection_intervals(c) for c in conns])
    return Context(facts, {c.flow: c for c in conns}, LabelledTime.of(spans), [])
