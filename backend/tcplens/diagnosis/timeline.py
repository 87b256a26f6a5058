"""Label the time of every transfer with the factor that held it back (the period labelling).

In the spirit of T-RAT (Zhang et al., "On the characteristics and origins of internet flow
rates", SIGCOMM 2002) and Siekkinen et al. ("A root cause analysis toolkit for TCP", Computer
Networks 2008): first separate the time the sender had nothing to send (application turns, idle)
from bulk time, then within bulk decide what stopped the sender from sending more.

The unit of time is the interval between two consecutive data segments of a transfer,
``[t[i], t[i+1])``: the question is always "why was segment i+1 not sent earlier?", answered from
what the sender knew — the acknowledgements captured before ``t - lag_s`` (see
``Transfer.lag_s``), which makes the answer the same near the sender, near the receiver or in the
middle. In priority order:

1. ``loss``: the interval lies in a loss recovery (from a retransmission until the data that was
   outstanding then is acknowledged) and its next segment came within ``idle_after`` of the
   recovery's end (else the pause after it is judged by the steps below: a sender with nothing
   to send once recovered), or it ends with a retransmission (the sender was waiting for
   duplicate ACKs or its retransmission timer).
2. ``nagle_delayed_ack``: a small segment, then a stall until its ACK arrived late (the
   receiver's delayed-ACK timer), then the next segment at once: Nagle's algorithm held it
   (RFC 896, RFC 1122 §4.2.3.4). See ``rules/nagle_delayed_ack.py``.
3. window-blocked: the highest byte sent reaches the right edge the receiver advertised (ack +
   window, as the sender knew it just before it resumed) to within one segment. After a pause,
   when the timestamps the sender echoed show a longer round trip through it than the
   handshake's (a queue between the capture point and the sender), the edge it knew is asked
   at that round trip: the ACKs that freed the window had not reached it yet. If the advertised
   window was below 3/4 of the largest one this receiver offered so far, the receiving
   application left data unread in its buffer (``receiver_app``); otherwise the buffer itself is
   too small for the path (``receiver_window``).
4. the sender paused with everything acknowledged: it had nothing to send. If the peer's
   message that ended the pause carried content (a request, an HTTP response) and the sender
   answered at once, the pause was a request/response exchange, one round trip (``latency``);
   if the peer only sent an application-level acknowledgement (stop-and-wait), nothing, or the
   sender took long to answer, its application held it (``application``). Pauses longer than
   ``idle_after(rtt)`` are idle (not labelled: not time the transfer was trying to move data).
5. the sender paused although ACKs freed room during the pause and data was still outstanding:
   the data was not in its socket buffer yet (``sender_buffer``: SO_SNDBUF too small, or writes too
   small — the kernel's tcpi_sndbuf_limited).
6. otherwise the congestion window was the limit: after a loss and without queueing delay it is
   still the loss that keeps the window down (``loss``) -- unless the flight out at the time was
   acknowledged, over the next round trip, at the path's own rate (its ACK pairs,
   ``labelling.path_rate``): a window the loss cut delivers less than the link carries, a sender
   that kept its rate after the loss (BBR) was held by the path (``bandwidth``); with the round
   trip inflated above its minimum a queue was building at the bottleneck (``bandwidth``);
   before any loss and without a queue the sender was still growing its window
   (``slow_start``).

The turn between the request and the first byte of the response (not inside any transfer) is
``latency`` when it lasts about one round trip and ``application`` (the server was thinking) when
it lasts much longer; the handshake is ``connection_setup``.

How the thresholds were checked: on the ten seed captures (../shared/captures/lab), the scenario
lab's grid (39 captures, RTT 5-200 ms, IPv4/IPv6, capture at either end, buffers 8-128 KB) and 45
more variants of it with the capture point flipped and other RTTs, the first finding is the
expected factor in 94 of 94, and the healthy controls get no high or medium finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tcplens.diagnosis import flow_labels, labelling, nagle, rtt_estimate
from tcplens.diagnosis.finding import FACTOR_INDEX, FACTORS, Factor
from tcplens.diagnosis.thresholds import BIG, UNREAD_WINDOW, idle_after, pause_after, think_after
from tcplens.diagnosis.transfer import F64, I64, B, Connection, Transfer

__all__ = [
    "UNREAD_WINDOW",
    "Intervals",
    "LabelledTime",
    "connection_intervals",
    "factor_shares",
    "idle_after",
    "nagle_stalls",
    "path_rate",
    "pause_after",
    "rtt_at",
    "run_every_kernel",
    "think_after",
    "transfer_intervals",
]

I8 = npt.NDArray[np.int8]
UNLABELLED = np.int8(-1)


@dataclass(frozen=True)
class Intervals:
    """Labelled intervals of one transfer (or of the whole capture once concatenated)."""

    flow: I64
    t0: F64
    t1: F64
    factor: I8  # index into FACTORS, -1 for idle
    frame0: I64  # the segment that starts the interval
    frame1: I64  # the segment that ends it
    stall_s: F64  # for nagle_delayed_ack: the delay beyond the round trip; else the duration

    @property
    def duration(self) -> F64:
        return self.t1 - self.t0

    def of(self, factor: Factor) -> B:
        mask: B = self.factor == FACTOR_INDEX[factor]
        return mask

    def take(self, rows: npt.NDArray[np.bool_] | I64) -> Intervals:
        """The intervals a boolean mask or an array of row numbers selects."""
        return Intervals(
            self.flow[rows],
            self.t0[rows],
            self.t1[rows],
            self.factor[rows],
            self.frame0[rows],
            self.frame1[rows],
            self.stall_s[rows],
        )

    @staticmethod
    def concat(parts: list[Intervals]) -> Intervals:
        if not parts:
            e64, ef = np.zeros(0, np.int64), np.zeros(0, np.float64)
            return Intervals(e64, ef, ef, np.zeros(0, np.int8), e64, e64, ef)
        return Intervals(
            np.concatenate([p.flow for p in parts]),
            np.concatenate([p.t0 for p in parts]),
            np.concatenate([p.t1 for p in parts]),
            np.concatenate([p.factor for p in parts]),
            np.concatenate([p.frame0 for p in parts]),
            np.concatenate([p.frame1 for p in parts]),
            np.concatenate([p.stall_s for p in parts]),
        )


def transfer_arrays(tr: Transfer) -> tuple[object, ...]:
    """A :class:`Transfer` in the kernels' layout (``flow_labels.T_*``)."""
    return (
        tr.t, tr.frame, tr.seq, tr.seq_end, tr.retransmission, tr.ack_t, tr.ack_frame, tr.ack,
        tr.window, tr.ack_payload, tr.rtt_t, tr.rtt_s, tr.echo_t, tr.echo_s, tr.zero_start,
        tr.zero_end, np.ascontiguousarray(tr.zero_frames[:, 0]),
        np.ascontiguousarray(tr.zero_frames[:, 1]), tr.zero_reopened, float(tr.lag_s),
        int(tr.mss),
    )  # fmt: skip


_NO_TRANSFER = (
    np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
    np.zeros(0, np.bool_), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64),
    np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
    np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64),
    np.zeros(0, np.bool_), 0.0, 0,
)  # fmt: skip


def new_intervals(size: int) -> tuple[I64, F64, F64, I8, I64, I64, F64]:
    """Uninitialised columns for ``size`` intervals, in the kernels' order (see ``Intervals``)."""
    return (
        np.empty(size, np.int64), np.empty(size), np.empty(size), np.empty(size, np.int8),
        np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size),
    )  # fmt: skip


def transfer_intervals(tr: Transfer, base_rtt: float) -> Intervals:
    """Label each interval between consecutive data segments of ``tr`` (module docstring)."""
    label, stall = labelling.label_transfer(
        tr.t, tr.seq, tr.seq_end, tr.retransmission, tr.ack_t, tr.ack, tr.window,
        tr.ack_payload, tr.rtt_t, tr.rtt_s, tr.echo_t, tr.echo_s, float(tr.lag_s), int(tr.mss),
        float(base_rtt),
    )  # fmt: skip
    k = label.size
    return Intervals(
        np.full(k, tr.flow, np.int64), tr.t[:k], tr.t[1 : k + 1], label, tr.frame[:k],
        tr.frame[1 : k + 1], stall,
    )  # fmt: skip


def connection_intervals(conn: Connection) -> Intervals:
    """Labelled time of one connection: handshake, the first turn, and its main transfer.

    Only the transfer with the most payload is labelled over its span, so that a response and its
    ACK stream are not counted twice; the time before its first segment after the handshake is
    the request turn.
    """
    txs = [transfer_arrays(tr) for tr in conn.transfers[:2]]
    txs += [_NO_TRANSFER] * (2 - len(txs))
    size = 3 + sum(tr.t.size + 2 * tr.zero_start.size for tr in conn.transfers)
    out = new_intervals(size)

    def nan_if_none(x: float | None) -> float:
        return np.nan if x is None else float(x)

    end = flow_labels.label_connection(
        txs[0], txs[1], conn.flow, float(conn.start_s), nan_if_none(conn.syn_s),
        nan_if_none(conn.established_s), nan_if_none(conn.handshake_rtt_s), conn.first_frame,
        conn.syn_frame or conn.first_frame, out, 0,
    )  # fmt: skip
    flow, t0, t1, factor, frame0, frame1, stall = out
    return Intervals(
        flow[:end], t0[:end], t1[:end], factor[:end], frame0[:end], frame1[:end], stall[:end]
    )


def rtt_at(tr: Transfer, query: F64, base_rtt: float) -> F64:
    """Round-trip estimate at each query time (``rtt_estimate.rtt_at``)."""
    out: F64 = rtt_estimate.rtt_at(
        np.ascontiguousarray(query, np.float64), tr.rtt_t, tr.rtt_s, tr.echo_t, tr.echo_s,
        float(tr.lag_s), float(base_rtt),
    )  # fmt: skip
    return out


def path_rate(tr: Transfer) -> float:
    """The rate (bytes/s) the path delivered ``tr``'s segments at when they left its bottleneck
    back to back (``labelling.path_rate``); ``inf`` when the ACKs do not show it."""
    acked = np.maximum.accumulate(tr.ack) if tr.ack.size else tr.ack
    return float(labelling.path_rate(tr.ack_t, acked))


def nagle_stalls(tr: Transfer, base_rtt: float) -> tuple[B, F64]:
    """Intervals where Nagle's algorithm waited for a delayed ACK, and the delay beyond the
    round trip (``nagle.nagle_stalls``)."""
    known = tr.window >= 0
    edge = np.where(known, tr.ack + np.maximum(tr.window, 0), BIG)
    stall, delay = nagle.nagle_stalls(
        tr.t, tr.seq, tr.seq_end, tr.retransmission, tr.ack_t,
        np.maximum.accumulate(tr.ack) if tr.ack.size else tr.ack,
        np.maximum.accumulate(edge) if edge.size else edge.astype(np.int64),
        tr.ack_payload, float(tr.lag_s), int(tr.mss), float(base_rtt),
    )  # fmt: skip
    return stall, delay


def run_every_kernel(conn: Connection) -> None:
    """Call every kernel of the functions above on ``conn`` and each of its transfers, with the
    types the rules and tools call them with. The build step (``kernel_build``) runs it on every
    connection of its captures: a rule calls them only for a flow it found something in, and
    which rules find something there must not decide which kernels are compiled ahead."""
    base_rtt = conn.min_rtt_s or 0.0
    connection_intervals(conn)
    for tr in conn.transfers:
        transfer_intervals(tr, base_rtt)
        nagle_stalls(tr, base_rtt)
        rtt_at(tr, tr.t, base_rtt)
        path_rate(tr)


def shares_by_connection(durations: F64, seconds: F64) -> list[dict[Factor, float]]:
    """Share of each connection's duration held by each factor (each sums to at most 1), from
    the seconds each factor held each connection (``LabelledTime.seconds``)."""
    n = durations.size
    per = seconds.reshape(n, len(FACTORS))
    total = np.maximum(durations, 1e-9)
    scale = np.minimum(1.0, total / np.maximum(per.sum(axis=1), 1e-12))
    # Rounded down, so that the shares never sum to more than 1 by rounding.
    shares = np.floor(per * scale[:, None] / total[:, None] * 1e4) / 1e4
    held = per > 0
    return [
        {FACTORS[i]: float(shares[c, i]) for i in np.flatnonzero(held[c]).tolist()}
        for c in range(n)
    ]


def factor_shares(conn: Connection, spans: Intervals) -> dict[Factor, float]:
    """Share of the connection's duration held by each factor (sums to at most 1)."""
    labelled = spans.factor >= 0
    per = np.asarray(
        np.bincount(
            spans.factor[labelled].astype(np.int64),
            weights=spans.duration[labelled],
            minlength=len(FACTORS),
        ),
        np.float64,
    )
    return shares_by_connection(np.array([conn.duration_s]), per)[0]


@dataclass(frozen=True)
class LabelledTime:
    """The labelled time of the labelled connections, in the sizes the rules use: per
    connection and factor the seconds and the number of intervals; all intervals with each run
    merged into one (enough for evidence ranges: ``flow_labels._put``); and one
    connection's own intervals, labelled again when a rule first asks for them (the rules look
    at a few connections: the worst of each factor)."""

    flows: I64  # flow id of each connection, ascending
    # (connections, len(FACTORS)): each factor's seconds, added in the intervals' order (as a
    # weighted bincount adds them), and its number of intervals
    seconds: F64
    counts: I64
    runs: Intervals
    _exact: Callable[[int], Intervals]  # connection c's intervals (c indexes ``flows``)
    _built: dict[int, Intervals] = field(default_factory=dict)

    @staticmethod
    def of(spans: Intervals) -> LabelledTime:
        """The labelled time of exact intervals (one connection's after the other's)."""
        flows, conn = np.unique(spans.flow, return_inverse=True)
        labelled = spans.factor >= 0
        bins = conn.ravel()[labelled] * len(FACTORS) + spans.factor[labelled].astype(np.int64)
        size = flows.size * len(FACTORS)
        seconds = np.asarray(
            np.bincount(bins, weights=spans.duration[labelled], minlength=size), np.float64
        )
        counts = np.bincount(bins, minlength=size)
        return LabelledTime(
            flows.astype(np.int64),
            seconds.reshape(flows.size, len(FACTORS)),
            counts.astype(np.int64).reshape(flows.size, len(FACTORS)),
            spans,
            lambda c: spans.take(spans.flow == flows[c]),
        )

    def intervals(self, factor: Factor, flows: Iterable[int]) -> Intervals:
        """The intervals ``factor`` held in these flows, flow by flow (ascending), each flow's
        in labelling order."""
        parts = []
        code = FACTOR_INDEX[factor]
        for flow in sorted(set(flows)):
            c = int(np.searchsorted(self.flows, flow))
            if c == self.flows.size or self.flows[c] != flow:
                continue
            if c not in self._built:
                self._built[c] = self._exact(c)
            own = self._built[c]
            parts.append(own.take(own.factor == code))
        return Intervals.concat(parts)
