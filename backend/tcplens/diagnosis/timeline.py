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
   outstanding then is acknowledged), or it ends with a retransmission (the sender was waiting for
   duplicate ACKs or its retransmission timer).
2. ``nagle_delayed_ack``: a small segment, then a stall until its ACK arrived late (the
   receiver's delayed-ACK timer), then the next segment at once: Nagle's algorithm held it
   (RFC 896, RFC 1122 §4.2.3.4). See ``rules/nagle_delayed_ack.py``.
3. window-blocked: the highest byte sent reaches the right edge the receiver advertised (ack +
   window, as the sender knew it just before it resumed) to within one segment. If the advertised
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
   still the loss that keeps the window down (``loss``); with the round trip inflated above its
   minimum a queue was building at the bottleneck (``bandwidth``); before any loss and without a
   queue the sender was still growing its window (``slow_start``).

The turn between the request and the first byte of the response (not inside any transfer) is
``latency`` when it lasts about one round trip and ``application`` (the server was thinking) when
it lasts much longer; the handshake is ``connection_setup``.

How the thresholds were checked: on the ten seed captures (../shared/captures/lab), the scenario
lab's grid (39 captures, RTT 5-200 ms, IPv4/IPv6, capture at either end, buffers 8-128 KB) and 45
more variants of it with the capture point flipped and other RTTs, the first finding is the
expected factor in 94 of 94, and the healthy controls get no high or medium finding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.diagnosis.finding import FACTOR_INDEX, FACTORS, Factor
from tcplens.diagnosis.pauses import APP_ACK_MAX_BYTES, nagle_stalls, pause_causes, think_after
from tcplens.diagnosis.transfer import F64, I64, B, Connection, Transfer

I8 = npt.NDArray[np.int8]
UNLABELLED = np.int8(-1)

# A round trip counts as inflated by queueing when it exceeds the smallest one by a quarter, and by
# at least 2 ms (timer and scheduling noise of the hosts). A 60 ms queue on a 30 ms path is +200%;
# 1% random loss without a queue stays within +15%.
QUEUE_INFLATION = 0.25
QUEUE_INFLATION_FLOOR_S = 0.002
RARE_LOSS_RTTS = 20.0


# A receiver whose application keeps up advertises its whole buffer on every ACK (the window
# only moves by rounding to the window scale); one whose window is below 3/4 of the largest it
# offered holds unread data. slow_reader_get_10ms_v6 (reads every 40 ms) offers 57-64 % of its
# largest window after each read; rcvbuf_locked_download stays at 100 %.
UNREAD_WINDOW = 0.75


def pause_after(rtt_s: float) -> float:
    """A gap between two segments longer than this is a pause, not back-to-back sending."""
    return max(0.001, 0.1 * rtt_s)


def idle_after(rtt_s: float) -> float:
    """A pause with nothing outstanding longer than this is idle time, not an application turn."""
    return max(0.5, 4.0 * rtt_s)


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

    def take(self, mask: npt.NDArray[np.bool_]) -> Intervals:
        return Intervals(
            self.flow[mask],
            self.t0[mask],
            self.t1[mask],
            self.factor[mask],
            self.frame0[mask],
            self.frame1[mask],
            self.stall_s[mask],
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


def _index(times: F64, query: F64) -> I64:
    """Index of the last entry at or before each query time, -1 if none."""
    idx: I64 = np.searchsorted(times, query, side="right") - 1
    return idx


def _pick(values: npt.NDArray[np.int64], idx: I64, before: int) -> I64:
    """``values[idx]``, or ``before`` where ``idx`` is -1 (nothing acknowledged yet)."""
    if values.size == 0:  # a receiver that never acknowledged anything
        return np.full(idx.shape, before, np.int64)
    out: I64 = np.where(idx >= 0, values[np.maximum(idx, 0)], before).astype(np.int64)
    return out


def _at(times: F64, values: npt.NDArray[np.int64], query: F64, before: int) -> I64:
    """The value in force at each query time (last entry at or before it), ``before`` if none."""
    return _pick(values, _index(times, query), before)


def _running_max_by_group(values: I64, group: I64) -> I64:
    """Running maximum of ``values`` *before* each position, restarted where ``group`` changes.

    ``group`` is non-decreasing; offsetting each group by a multiple larger than any value makes
    one ``maximum.accumulate`` respect the group boundaries.
    """
    if values.size == 0:
        return values
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    shifted = (values - lo) + group.astype(np.int64) * span
    run = np.maximum.accumulate(shifted)
    prev = np.concatenate(([-1], run[:-1]))
    same = np.concatenate(([False], group[1:] == group[:-1]))
    return np.where(same, prev - group.astype(np.int64) * span + lo, values).astype(np.int64)


def rtt_at(tr: Transfer, query: F64, base_rtt: float) -> F64:
    """Round-trip estimate at each query time: data->ACK part plus the part through the sender.

    Each part is interpolated from its samples; a 3-sample running minimum takes out isolated
    delayed ACKs (a receiver may hold an ACK 40-200 ms), which are not queueing.
    """
    out = np.zeros(query.shape, np.float64)
    parts = ((tr.rtt_t, tr.rtt_s, base_rtt - tr.lag_s), (tr.echo_t, tr.echo_s, tr.lag_s))
    for ts, vs, default in parts:
        if vs.size >= 3:
            smooth = np.minimum(np.minimum(vs[:-2], vs[1:-1]), vs[2:])
            out += np.interp(query, ts[1:-1], smooth)
        elif vs.size:
            out += float(np.min(vs))
        else:
            out += max(default, 0.0)
    return out


def label_transfer(tr: Transfer, base_rtt: float) -> Intervals:
    """Label each interval between consecutive data segments of ``tr`` (see module docstring)."""
    n = tr.t.size
    if n < 2:
        return Intervals.concat([])
    t0, t1 = tr.t[:-1], tr.t[1:]
    gap = t1 - t0
    seg = max(int(np.max(tr.seq_end - tr.seq)), 1)
    high = np.maximum.accumulate(tr.seq_end)[:-1]  # highest byte sent up to segment i

    ack_cum = np.maximum.accumulate(tr.ack) if tr.ack.size else tr.ack
    known = tr.window >= 0
    edge = np.where(known, tr.ack + np.maximum(tr.window, 0), np.iinfo(np.int64).max // 4)
    edge_cum = np.maximum.accumulate(edge) if edge.size else edge
    win_max = np.maximum.accumulate(np.where(known, tr.window, 0)) if edge.size else edge

    # What the sender knew just before it resumed, and when segment i left.
    jitter = max(0.0005, 0.2 * tr.lag_s)
    resume_view = t1 - tr.lag_s - jitter
    # Symmetrically, the ACK that released segment i counts as known when it left: the
    # handshake's lag is only an estimate of the sender's reaction time.
    start_view = t0 - tr.lag_s + max(0.0005, 0.05 * tr.lag_s)
    big = np.iinfo(np.int64).max // 4
    at_resume = _index(tr.ack_t, resume_view)  # one search, four quantities
    edge_v = _pick(edge_cum, at_resume, big)
    ack_v = _pick(ack_cum, at_resume, 0)
    # "Everything acknowledged" includes the ACK that let the sender resume (an application's
    # answer often carries it), so this view reaches 20 % of the lag past the resume's trigger:
    # nothing extra near the sender, where ACKs tens of microseconds apart must stay apart.
    ack_r = _at(tr.ack_t, ack_cum, t1 - 0.8 * tr.lag_s, 0)
    ack_s = _at(tr.ack_t, ack_cum, start_view, 0)
    win_v = _pick(np.where(known, tr.window, big), at_resume, big)
    winmax_v = _pick(win_max, at_resume, 0)

    blocked = edge_v - high < seg
    starved = blocked & ((win_v < UNREAD_WINDOW * winmax_v) | (win_v == 0))
    paused = gap > pause_after(base_rtt)
    all_acked = ack_r >= high
    freed = (ack_v - ack_s) >= 2 * seg
    answer, think, ack_woke = pause_causes(tr, t0, t1, base_rtt)
    # Idle: a long pause in which the peer said nothing, or spoke only late in it (a user who
    # thought for a while before the next request). A peer that asked early and waited long for
    # the answer is the sender's application thinking, however long it took.
    asked_late = (answer == 0) | (gap - think > idle_after(base_rtt))
    idle = paused & all_acked & ~blocked & (gap > idle_after(base_rtt)) & asked_late
    exchange = (answer > APP_ACK_MAX_BYTES) & (think <= think_after(base_rtt))

    # Loss recovery ranges: from each retransmission until the data outstanding then is acked.
    rtx_idx = np.flatnonzero(tr.retransmission)
    in_recovery = np.zeros(n - 1, np.bool_)
    lost_before = np.zeros(n - 1, np.bool_)
    latest_rtx = np.full(n - 1, -1, np.int64)
    episodes = 0
    first_episode = np.zeros(n - 1, np.bool_)  # the last loss so far is in the first episode
    if rtx_idx.size:
        r_t = tr.t[rtx_idx]
        recovery_point = np.maximum.accumulate(tr.seq_end)[rtx_idx]
        k = np.searchsorted(ack_cum, recovery_point, side="left")
        end = np.full(k.size, np.inf)  # never acknowledged: recovery lasts to the end
        if ack_cum.size:
            end = np.where(k < ack_cum.size, tr.ack_t[np.minimum(k, ack_cum.size - 1)], np.inf)
        end = np.maximum.accumulate(end + tr.lag_s)
        j = np.searchsorted(r_t, t0, side="right") - 1
        in_recovery = (j >= 0) & (end[np.maximum(j, 0)] > t0)
        lost_before = j >= 0
        latest_rtx = np.where(j >= 0, rtx_idx[np.maximum(j, 0)], -1)
        in_first = r_t <= end[0]  # retransmissions of the first recovery
        # Loss episodes: a retransmission after the previous recovery ended starts a new one.
        episodes = 1 + int(np.count_nonzero(r_t[1:] > end[:-1]))
        first_episode = (j >= 0) & in_first[np.maximum(j, 0)]
    ends_in_rtx = tr.retransmission[1:]

    flight = high - ack_s
    restart = np.concatenate(([0], np.cumsum(paused & all_acked)[:-1]))
    flight_before = _running_max_by_group(flight, restart)
    # The largest flight two round trips earlier, in the same run: a congestion window that
    # nothing cut grows every round trip (doubling in slow start, at least a segment in
    # congestion avoidance), so a largest flight that stopped growing was not its doing.
    flight_upto = np.maximum(flight_before, flight)
    earlier = np.searchsorted(t0, t0 - 2.0 * base_rtt, side="right") - 1
    comparable = (earlier >= 0) & (restart[np.maximum(earlier, 0)] == restart) & (base_rtt > 0)
    stalled = comparable & (flight_upto - flight_upto[np.maximum(earlier, 0)] < seg)

    rtt_now = rtt_at(tr, t0, base_rtt)
    base = min(base_rtt, float(np.min(rtt_now))) if rtt_now.size else base_rtt
    queued = rtt_now > base + max(QUEUE_INFLATION_FLOOR_S, QUEUE_INFLATION * base)
    # A drop while the bottleneck's queue was full is TCP finding the path's limit (drop-tail
    # overflow), not a lossy path: its recovery counts as the path's bandwidth.
    rtx_queued = np.zeros(n - 1, np.bool_)
    if rtx_idx.size:
        # The drop happened about a round trip before its retransmission, and Karn's rule
        # leaves no RTT samples during the recovery: look at the queue a round trip earlier.
        dropped_at = tr.t[np.maximum(latest_rtx, 0)] - base_rtt
        at_rtx = np.maximum(
            rtt_at(tr, dropped_at, base_rtt), rtt_at(tr, dropped_at - base_rtt, base_rtt)
        )
        rtx_queued = (latest_rtx >= 0) & (
            at_rtx > base + max(QUEUE_INFLATION_FLOOR_S, QUEUE_INFLATION * base)
        )

    nagle, stall = nagle_stalls(tr, base_rtt)

    f = FACTOR_INDEX
    label = np.where(queued, f["bandwidth"], f["slow_start"]).astype(np.int8)
    label[lost_before & ~queued] = f["loss"]
    # Without loss the congestion window never shrinks, so a sender whose data in flight stays
    # below what it already had in flight earlier (since it last ran out of data: a new message
    # may be written piecemeal, and an idle restart resets the window, RFC 2861) was not
    # held by its congestion window but by the data it had to send.
    # The receiver's window must have had room for that earlier flight too, or it is the window.
    room = (edge_v - ack_v) >= flight_before + 2 * seg
    held = ((flight < 0.9 * flight_before) | stalled) & room
    label[(label == f["slow_start"]) & held] = f["sender_buffer"]
    label[paused & freed & ~all_acked] = f["sender_buffer"]
    waited = paused & all_acked
    label[waited] = np.where(exchange[waited], f["latency"], f["application"])
    # Nothing came from the peer, and the sender resumed the moment an ACK freed its buffer:
    # it had more to send but no room to hold it (a full SO_SNDBUF wakes the writer on ACKs).
    label[waited & (answer == 0) & ack_woke] = f["sender_buffer"]
    # ...unless the round after the pause carried clearly more than the one before it: that is
    # a congestion window growing round by round (slow start seen from the receiver's side, where
    # a whole round is acknowledged before the next one arrives), not a buffer refilled.
    next_round = np.searchsorted(tr.t, t1 + 0.9 * base_rtt, side="left") - 1
    sent_next = np.maximum.accumulate(tr.seq_end)[np.maximum(next_round, 0)] - high
    grew = sent_next > 1.5 * np.maximum(flight, seg)
    # A round that ends the transfer cannot show growth (it sends what is left): undecided, so
    # the congestion window, TCP's default, rather than a buffer problem.
    last_round = next_round >= n - 1
    label[waited & (answer == 0) & (grew | last_round) & ~lost_before] = f["slow_start"]
    label[idle] = UNLABELLED
    label[blocked] = f["receiver_window"]
    label[starved] = f["receiver_app"]
    label[nagle] = f["nagle_delayed_ack"]
    # One burst of drops when a growing window first overflowed the bottleneck's queue (slow
    # start overshooting, then regrowing) is how TCP starts on a full path, not a lossy path.
    if rtx_idx.size and bool(rtx_queued[first_episode].any()):
        overshoot = first_episode & lost_before & ~queued
        label[overshoot & (label == f["loss"])] = f["slow_start"]
    # Drops at a full queue that come rarely (fewer than one per RARE_LOSS_RTTS round trips) are
    # TCP probing a full path; the regrowth between them is the path's limit, not loss. Random
    # loss of 0.5-2 % recurs every 1-7 round trips on the lab's paths.
    span_rtts = (tr.t[-1] - tr.t[0]) / base_rtt if base_rtt > 0 else 0.0
    if episodes and bool(rtx_queued.any()) and span_rtts >= RARE_LOSS_RTTS * episodes:
        label[lost_before & ~queued & (label == f["loss"])] = f["bandwidth"]
    recovering = in_recovery | ends_in_rtx
    label[recovering] = np.where(rtx_queued[recovering], f["bandwidth"], f["loss"])

    stall_s = np.where(nagle, stall, gap)
    flow = np.full(n - 1, tr.flow, np.int64)
    return Intervals(flow, t0, t1, label, tr.frame[:-1], tr.frame[1:], stall_s)


def dominant(conn: Connection) -> Transfer | None:
    """The transfer of a connection that carried the most payload."""
    if not conn.transfers:
        return None
    return max(conn.transfers, key=lambda tr: tr.payload_bytes)


def label_connection(conn: Connection) -> Intervals:
    """Labelled time of one connection: handshake, the first turn, and its main transfer.

    Only the transfer with the most payload is labelled over its span, so that a response and its
    ACK stream are not counted twice; the time before its first segment after the handshake is
    the request turn.
    """
    base_rtt = conn.min_rtt_s or 0.0
    parts: list[Intervals] = []
    f = FACTOR_INDEX

    def single(t0: float, t1: float, factor: int, fr0: int, fr1: int) -> Intervals:
        return Intervals(
            np.array([conn.flow], np.int64),
            np.array([t0]),
            np.array([t1]),
            np.array([factor], np.int8),
            np.array([fr0], np.int64),
            np.array([fr1], np.int64),
            np.array([t1 - t0]),
        )

    main = dominant(conn)
    if conn.syn_s is not None and conn.established_s is not None:
        parts.append(
            single(
                conn.syn_s,
                conn.established_s,
                f["connection_setup"],
                conn.syn_frame or conn.first_frame,
                conn.first_frame,
            )
        )
    if main is not None and main.t.size:
        turn_start = conn.established_s if conn.established_s is not None else conn.start_s
        others = [tr for tr in conn.transfers if tr is not main and tr.t.size]
        before = [tr for tr in others if tr.t[0] < main.t[0]]
        slow_turn = 2.0 * base_rtt + 0.05  # a round trip each way and some scheduling
        if before:  # a request preceded the main transfer: its turn starts at the request
            request = min(before, key=lambda tr: float(tr.t[0]))
            asked = float(request.t[0])
            # The client's own delay between the handshake and its request.
            if conn.established_s is not None and asked - conn.established_s > slow_turn:
                parts.append(
                    single(conn.established_s, asked, f["application"], conn.first_frame,
                           int(request.frame[0]))
                )  # fmt: skip
            turn_start = asked
        turn = float(main.t[0]) - turn_start
        if turn > 0:
            factor = f["latency"] if turn <= slow_turn else f["application"]
            first = int(before[0].frame[0]) if before else conn.first_frame
            parts.append(single(turn_start, float(main.t[0]), factor, first, int(main.frame[0])))
        parts.append(label_transfer(main, base_rtt))
        parts.append(closed_window_outside(main))
    return Intervals.concat(parts)


def closed_window_outside(tr: Transfer) -> Intervals:
    """Zero-window time outside the span of the transfer's data segments (``receiver_app``).

    Inside that span the intervals already say it; after the last segment (a receiver that never
    reads again: the sender only probes) or before the first (a capture that starts mid-stall)
    nothing else would.
    """
    first, last = float(tr.t[0]), float(tr.t[-1])
    after0 = np.maximum(tr.zero_start, last)
    after = tr.zero_end > after0
    before1 = np.minimum(tr.zero_end, first)
    before = before1 > tr.zero_start
    t0 = np.concatenate((after0[after], tr.zero_start[before]))
    t1 = np.concatenate((tr.zero_end[after], before1[before]))
    frames = np.concatenate((tr.zero_frames[after], tr.zero_frames[before]))
    k = t0.size
    return Intervals(
        np.full(k, tr.flow, np.int64), t0, t1,
        np.full(k, FACTOR_INDEX["receiver_app"], np.int8),
        frames[:, 0].copy(), frames[:, 1].copy(), t1 - t0,
    )  # fmt: skip


def factor_shares(conn: Connection, spans: Intervals) -> dict[Factor, float]:
    """Share of the connection's duration held by each factor (sums to at most 1)."""
    total = max(conn.end_s - conn.start_s, 1e-9)
    durations = np.bincount(
        spans.factor[spans.factor >= 0].astype(np.int64),
        weights=spans.duration[spans.factor >= 0],
        minlength=len(FACTORS),
    )
    scale = min(1.0, total / max(float(durations.sum()), 1e-12))
    # Rounded down, so that the shares never sum to more than 1 by rounding.
    return {
        FACTORS[i]: float(np.floor(float(durations[i]) * scale / total * 1e4) / 1e4)
        for i in range(len(FACTORS))
        if durations[i] > 0
    }
