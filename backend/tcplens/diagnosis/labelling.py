"""The period labelling's per-segment work, compiled: one sequential scan per transfer.

``timeline.py`` says what each label means and why (T-RAT, Siekkinen et al.); this module
computes the labels. The questions asked of every interval between two data segments ("what
did the sender know just before it resumed?") are searches in the receiver's ACK stream; here
each is a gallop from the previous answer, so a transfer costs a few passes over its segments
and ACKs instead of a binary search per question. Every quantity is the same float/int
arithmetic as the vectorised formulation it replaced (same operations, same order, numpy's own
``searchsorted`` and ``interp`` semantics), so the labels are bit for bit what they were.

A compiled kernel freezes the globals it reads into its machine code: the labels it sets are the
factor registry's indices (``C_*`` below, read from ``factors.py``) and the thresholds live in
``thresholds.py``; the kernel cache's digest covers both (``kernel_cache.CORE``: all of
``diagnosis/``), so a change to either compiles the kernels again. The round-trip estimate is
``rtt_estimate.py``, the Nagle test ``nagle.py``.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.diagnosis.factors import FACTOR_INDEX
from tcplens.diagnosis.nagle import _may_be_nagle, _nagle_at
from tcplens.diagnosis.rtt_estimate import _add_rtt_part, _rtt_at, _rtt_part
from tcplens.diagnosis.search import (
    _is_sorted,
    search_ascending,
    search_one,
    search_shifted,
    searched_unsorted,
)
from tcplens.diagnosis.thresholds import (
    APP_ACK_MAX_BYTES,
    BIG,
    FULL_LINK,
    QUEUE_INFLATION,
    QUEUE_INFLATION_FLOOR_S,
    RARE_LOSS_RTTS,
    UNREAD_WINDOW,
    idle_after,
    pause_after,
    sender_jitter,
    think_after,
)

# The labels the kernels set: the factor registry's indices (-1 for idle), constants numba
# freezes into the kernels when it compiles them.
C_BANDWIDTH = FACTOR_INDEX["bandwidth"]
C_SLOW_START = FACTOR_INDEX["slow_start"]
C_LOSS = FACTOR_INDEX["loss"]
C_SENDER_BUFFER = FACTOR_INDEX["sender_buffer"]
C_LATENCY = FACTOR_INDEX["latency"]
C_APPLICATION = FACTOR_INDEX["application"]
C_RECEIVER_WINDOW = FACTOR_INDEX["receiver_window"]
C_RECEIVER_APP = FACTOR_INDEX["receiver_app"]
C_NAGLE = FACTOR_INDEX["nagle_delayed_ack"]
C_SETUP = FACTOR_INDEX["connection_setup"]
N_FACTORS = len(FACTOR_INDEX)  # the per-factor sums' width

_pause_after = numba.njit(cache=True)(pause_after)
_idle_after = numba.njit(cache=True)(idle_after)
_think_after = numba.njit(cache=True)(think_after)
_sender_jitter = numba.njit(cache=True, inline="always")(sender_jitter)


@numba.njit(cache=True)
def _at(values, j, before):  # type: ignore[no-untyped-def]
    """``values[j]``, or ``before`` where nothing was seen yet (index -1, or no values)."""
    return values[j] if values.size and j >= 0 else before


@numba.njit(cache=True)
def path_rate(ack_t, ack_cum):  # type: ignore[no-untyped-def]
    """The rate (bytes/s) at which the path delivered this transfer's data when it was the
    limit, from the ACK stream alone: Keshav's packet pair ("A control-theoretic approach to flow
    control", SIGCOMM 1991). Segments that queued back to back at the bottleneck leave it one
    serialisation time apart and are acknowledged that far apart, so the bytes an ACK advances
    over its gap from the previous advancing ACK are the bottleneck's rate (the delivery rate of
    draft-cheng-iccrg-delivery-rate-estimation, sampled per ACK). Gaps between flights spread
    some pairs; ACK compression, rarer, could only make a pair look faster, which makes the
    full-link test of ``label_transfer`` hold less often. The upper quartile of the samples: at
    least a quarter of the pairs showed this rate. ``inf`` (no evidence) below 4 samples. The ACK
    stream is the same at either capture point, shifted by the lag."""
    m = ack_t.size
    rates = np.empty(max(m - 1, 0))
    k = 0
    prev = -1
    for j in range(1, m):
        if ack_cum[j] > ack_cum[j - 1]:
            if prev >= 0 and ack_t[j] > ack_t[prev]:
                rates[k] = (ack_cum[j] - ack_cum[prev]) / (ack_t[j] - ack_t[prev])
                k += 1
            prev = j
    if k < 4:
        return np.inf
    return np.percentile(rates[:k], 75.0)


@numba.njit(cache=True)
def label_transfer(  # type: ignore[no-untyped-def]
    t, seq, seq_end, retrans, ack_t, ack, window, ack_payload,
    rtt_t, rtt_s, echo_t, echo_s, lag, mss, base_rtt,
):  # fmt: skip
    """Label each interval ``[t[i], t[i+1])`` between consecutive data segments of one transfer
    (timeline.py's steps 1-6). Returns (factor code, stall seconds) per interval."""
    n = t.size
    k = max(n - 1, 0)
    label = np.empty(k, np.int8)
    stall_s = np.empty(k)
    if n < 2:
        return label, stall_s
    m = ack_t.size
    t0, t1 = t[:-1], t[1:]
    seg = 1
    high_all = np.empty(n, np.int64)  # highest byte sent up to and including segment i
    run = seq_end[0]
    for i in range(n):
        seg = max(seg, seq_end[i] - seq[i])
        run = max(run, seq_end[i])
        high_all[i] = run
    high = high_all[:-1]

    ack_cum = np.empty(m, np.int64)
    edge_cum = np.empty(m, np.int64)  # right edge (ack + window) as far as it ever reached
    win_max = np.empty(m, np.int64)
    win_or_big = np.empty(m, np.int64)
    csum = np.empty(m + 1, np.int64)  # payload the peer sent before ACK j
    csum[0] = 0
    # (running values in registers: read back from the arrays, each step waited for the store)
    run_ack = ack[0] if m else 0
    run_edge = run_win = run_payload = 0
    if m:
        run_edge = ack[0] + max(window[0], 0) if window[0] >= 0 else BIG
        run_win = max(window[0], 0)
    for j in range(m):
        known = window[j] >= 0
        edge = ack[j] + max(window[j], 0) if known else BIG
        run_ack = max(run_ack, ack[j])
        run_edge = max(run_edge, edge)
        run_win = max(run_win, window[j] if known else 0)
        ack_cum[j], edge_cum[j], win_max[j] = run_ack, run_edge, run_win
        win_or_big[j] = window[j] if known else BIG
        run_payload += ack_payload[j]
        csum[j + 1] = run_payload

    # What the sender knew just before it resumed, and when segment i left (see timeline.py).
    jitter = _sender_jitter(lag)
    # (each a search of shifted segment times: search_shifted, with the order checked once)
    t_sorted, acks_sorted = _is_sorted(t), _is_sorted(ack_t)
    at_resume = search_shifted(ack_t, acks_sorted, t1, t_sorted, -lag, -jitter, True, -1)
    # ACKs seen when it resumed, lag-shifted (asked of pauses only: search_one)
    hi = searched_unsorted(ack_t, acks_sorted, t1, t_sorted, -(0.8 * lag), 0.0, True)
    at_start = search_shifted(
        ack_t, acks_sorted, t0, t_sorted, -lag, max(0.0005, 0.05 * lag), True, -1
    )
    # What the peer sent during each interval (bytes), how long the sender took to resume after
    # the peer's last message with content, and whether the resume followed an ACK at once.
    # A message that carries content (more than an application-level acknowledgement of
    # ``APP_ACK_MAX_BYTES``) answered within ``think_after(rtt)`` is a request/response exchange,
    # one round trip (``latency``: a pooled HTTP connection asking for one object after another);
    # a tiny answer that only says "go on" is a stop-and-wait protocol, and a long wait after the
    # request is the sender's application thinking (both ``application``).
    # (these and next_round, earlier: asked of few intervals, search_one)
    lo = searched_unsorted(ack_t, acks_sorted, t0, t_sorted, -lag, 0.0, True)
    n_data = 0
    for j in range(m):
        n_data += ack_payload[j] > 0
    data_t = np.empty(n_data)
    n_data = 0
    for j in range(m):
        if ack_payload[j] > 0:
            data_t[n_data] = ack_t[j]
            n_data += 1
    # (data_t is part of ack_t: in order when it is)
    kk = searched_unsorted(data_t, acks_sorted, t1, t_sorted, -(0.8 * lag), 0.0, True)
    woke_tolerance = max(0.001, 0.1 * base_rtt) + 0.2 * lag
    # Nagle (``nagle_stalls``): the first ACK covering each interval's highest byte.
    q = search_ascending(ack_cum, True, high, False)  # (both running maxima)
    far_side = max(base_rtt - lag, 0.0)  # capture point -> receiver -> capture point
    nagle_tolerance = max(0.002, 0.1 * base_rtt)

    # Loss recovery: from each retransmission until the data outstanding then is acknowledged.
    n_rtx = 0
    for i in range(n):
        n_rtx += retrans[i]
    rtx_idx = np.empty(n_rtx, np.int64)
    n_rtx = 0
    for i in range(n):
        if retrans[i]:
            rtx_idx[n_rtx] = i
            n_rtx += 1
    jr = np.empty(0, np.int64)  # for each interval, the latest retransmission before it
    r_t = np.empty(0)
    end = np.empty(0)
    episodes = 0
    if n_rtx:
        r_t = t[rtx_idx]
        k_rec = search_ascending(ack_cum, True, high_all[rtx_idx], False)  # (running maxima)
        end = np.empty(n_rtx)
        reach = -np.inf
        for r in range(n_rtx):
            e = ack_t[k_rec[r]] if k_rec[r] < m else np.inf
            reach = max(reach, e + lag) if r else e + lag
            end[r] = reach
        episodes = 1
        for r in range(1, n_rtx):
            episodes += r_t[r] > end[r - 1]
        jr = search_shifted(r_t, t_sorted, t0, t_sorted, 0.0, 0.0, True, -1)  # (r_t: part of t)

    # Data in flight as the sender saw it; its largest value since the sender last ran out of
    # data, and two round trips earlier: a congestion window nothing cut keeps growing.
    pause_gap = _pause_after(base_rtt)
    flight = np.empty(k, np.int64)
    flight_before = np.empty(k, np.int64)
    restart = np.empty(k, np.int64)
    group_max = 0
    group = 0
    ran_out = False  # the interval before was a pause with everything acknowledged
    h_hi = 0  # (search_one's hint: its last answer)
    for i in range(k):
        flight[i] = high[i] - _at(ack_cum, at_start[i], 0)
        group += ran_out
        restart[i] = group
        if i == 0 or ran_out:
            flight_before[i] = flight[i]
            group_max = flight[i]
        else:
            flight_before[i] = group_max
            group_max = max(group_max, flight[i])
        ran_out = False
        if (t1[i] - t0[i]) > pause_gap:  # paused: was everything acknowledged?
            h_hi = search_one(ack_t, hi, t1, i, -(0.8 * lag), 0.0, True, h_hi)
            ran_out = _at(ack_cum, h_hi - 1, 0) >= high[i]
    earlier = searched_unsorted(t0, t_sorted, t0, t_sorted, -(2.0 * base_rtt), 0.0, True)
    next_round = searched_unsorted(t, t_sorted, t1, t_sorted, 0.9 * base_rtt, 0.0, False)

    rtt_part, echo_part = _rtt_part(rtt_t, rtt_s), _rtt_part(echo_t, echo_s)
    rtt_now = _rtt_at(t0, t_sorted, rtt_part, echo_part, lag, base_rtt)
    base = min(base_rtt, rtt_now.min())
    inflated = base + max(QUEUE_INFLATION_FLOOR_S, QUEUE_INFLATION * base)
    # The round trip from the capture point through the sender when it resumed, as the
    # timestamps it echoed measured it (``lag`` where they say nothing): a queue between the
    # capture point and the sender (the bottleneck's, at a capture near the receiver) makes it
    # longer than the handshake's, and the sender learnt of each ACK that much later.
    lag_now = np.zeros(k)
    _add_rtt_part(lag_now, t1, t_sorted, echo_part, lag)
    # A drop while the bottleneck's queue was full is TCP finding the path's limit: look at the
    # queue a round trip before the retransmission (Karn's rule leaves no samples during it).
    # The queue depends only on the latest retransmission: one estimate per retransmission.
    rtx_queued = np.zeros(n_rtx, np.bool_)
    any_queued_drop = False
    first_queued_drop = False
    if n_rtx:
        dropped_at = t[rtx_idx] - base_rtt
        # (in order when t is: a constant shift of some of its times)
        q1 = _rtt_at(dropped_at, t_sorted, rtt_part, echo_part, lag, base_rtt)
        q2 = _rtt_at(dropped_at - base_rtt, t_sorted, rtt_part, echo_part, lag, base_rtt)
        for r in range(n_rtx):
            rtx_queued[r] = max(q1[r], q2[r]) > inflated
        for i in range(k):
            r = jr[i]
            if r >= 0:
                any_queued_drop |= rtx_queued[r]
                first_queued_drop |= (r_t[r] <= end[0]) & rtx_queued[r]
    span_rtts = (t[n - 1] - t[0]) / base_rtt if base_rtt > 0 else 0.0
    rare_drops = episodes > 0 and any_queued_drop and span_rtts >= RARE_LOSS_RTTS * episodes
    # After a loss, what the window in force delivered: the bytes acknowledged over the round
    # trip that follows the interval's start (the flight the sender had out then, acknowledged;
    # the rate sample BBR itself takes when that flight's ACKs return, draft-cheng-iccrg-
    # delivery-rate-estimation), against the path's rate. A window the loss cut delivers less
    # than the link carries (CUBIC: beta = 0.7 of it); a sender that kept its rate (BBR) fills
    # it. The ACKs of the round trip before would still show the flight sent before the cut.
    # Only asked after a loss: the ACK pairs are read once per transfer with a retransmission.
    full_rate = FULL_LINK * path_rate(ack_t, ack_cum) if n_rtx and base_rtt > 0 else np.inf
    rate_tol = max(0.0005, 0.05 * lag)  # at_start's
    round_after = searched_unsorted(
        ack_t, acks_sorted, t0, t_sorted, base_rtt - lag, rate_tol, True
    )

    # Each interval's label, the first step of timeline.py's order that holds (what a later
    # step would have said is not computed: most intervals of a bulk transfer stop early).
    pause_idle = _idle_after(base_rtt)
    think_max = _think_after(base_rtt)
    # (search_one's hints: their last answers)
    h_hi = h_lo = h_kk = h_next = h_earlier = h_round = 0
    p_data = 0  # the peer's first message with payload not before the current interval
    for i in range(k):
        gap = t1[i] - t0[i]
        # (a Nagle stall's delay is its interval's stall whatever the label)
        nagle, nagle_delay = False, 0.0
        if m and _may_be_nagle(i, t, ack_t, lag, q[i], nagle_tolerance):
            nagle, nagle_delay = _nagle_at(
                i, t, seq, seq_end, retrans, ack_t, ack_cum, edge_cum, ack_payload, lag, mss,
                high[i], q[i], far_side, nagle_tolerance,
            )  # fmt: skip
        stall_s[i] = nagle_delay if nagle else gap
        r = jr[i] if n_rtx else -1  # the latest retransmission before the interval
        lost_before = r >= 0
        # 1. loss recovery -- while it lasted: an interval that began in a recovery but whose
        # next segment is new data sent more than ``idle_after`` after the recovery ended (every
        # byte up to the retransmission acknowledged, RFC 6582's "full acknowledgment") was the
        # sender with nothing to send once recovered, not the loss (a pushed message every
        # minute after one repaired drop is not a minute of loss); a backed-off RTO ends with a
        # retransmission and stays loss (RFC 6298 §5.5)
        recovering = lost_before and end[r] > t0[i] and t1[i] - end[r] <= pause_idle
        if recovering or retrans[i + 1]:
            label[i] = C_BANDWIDTH if lost_before and rtx_queued[r] else C_LOSS
            continue
        # 2. Nagle
        if nagle:
            label[i] = C_NAGLE
            continue
        # 3. window-blocked
        a = at_resume[i]
        edge_v = _at(edge_cum, a, BIG)
        late = lag_now[i]
        if edge_v - high[i] >= seg and gap > pause_gap and late > lag + jitter:
            # The timestamps say the sender's view lagged more than the handshake's round trip
            # (a queue stood between the capture point and it): the ACKs that freed the window
            # at the capture point had not reached it yet. A sender the window held waits for
            # them with data queued (Linux's tcp_write_xmit stops at the window's edge and sends
            # when an ACK moves it): ask what it knew at the round trip it had then.
            key = (t1[i] - late) - _sender_jitter(late)
            # (a walk back from ``a``, not search_one: the shift is this interval's own, and on
            # an unsorted ack_t no search made up front, nor numpy's, stops where the walk does)
            a_late = a
            while a_late >= 0 and ack_t[a_late] > key:
                a_late -= 1
            if _at(edge_cum, a_late, BIG) - high[i] < seg:
                a = a_late
                edge_v = _at(edge_cum, a, BIG)
        if edge_v - high[i] < seg:
            win_v = _at(win_or_big, a, BIG)
            starved = (win_v < UNREAD_WINDOW * _at(win_max, a, 0)) | (win_v == 0)
            label[i] = C_RECEIVER_APP if starved else C_RECEIVER_WINDOW
            continue
        ack_v = _at(ack_cum, a, 0)
        # A turn: the peer sent a message during the interval (as the sender saw it). However
        # short the pause (1,000 GETs on loopback answer in 0.6 ms, under ``pause_after``'s
        # 1 ms floor), a sender that waited for the peer's message with everything acknowledged
        # was in a request/response exchange, not held by its buffer or congestion window.
        turn = False
        if n_data:
            while p_data < n_data and data_t[p_data] <= t0[i] - lag:
                p_data += 1
            turn = p_data < n_data and data_t[p_data] <= t1[i] - 0.8 * lag
        if gap > pause_gap or turn:
            h_hi = search_one(ack_t, hi, t1, i, -(0.8 * lag), 0.0, True, h_hi)
            if _at(ack_cum, h_hi - 1, 0) >= high[i]:
                # 4. paused with everything acknowledged: what the peer sent during the
                # interval (bytes), how long the sender took to resume after the peer's last
                # message with content, whether the resume followed an ACK at once. A message
                # that carries content (more than an application-level acknowledgement of
                # ``APP_ACK_MAX_BYTES``) answered within ``think_after(rtt)`` is a
                # request/response exchange, one round trip (``latency``: a pooled HTTP
                # connection asking for one object after another); a tiny answer that only says
                # "go on" is a stop-and-wait protocol, and a long wait after the request is the
                # sender's application thinking (both ``application``).
                answer = 0
                woke = False
                think = np.inf
                if m:
                    h_lo = search_one(ack_t, lo, t0, i, -lag, 0.0, True, h_lo)
                    answer = csum[h_hi] - csum[h_lo]
                    last = h_hi - 1
                    heard_any = (ack_t[last] if last >= 0 else -np.inf) + lag
                    woke = last >= h_lo and abs(t1[i] - heard_any) <= woke_tolerance
                    if n_data:
                        h_kk = search_one(data_t, kk, t1, i, -(0.8 * lag), 0.0, True, h_kk)
                        heard = (data_t[h_kk - 1] if h_kk >= 1 else -np.inf) + lag
                        think = t1[i] - heard
                if gap > pause_idle and (answer == 0 or (gap - think) > pause_idle):
                    label[i] = -1  # idle
                    continue
                exchange = answer > APP_ACK_MAX_BYTES and think <= think_max
                f = C_LATENCY if exchange else C_APPLICATION
                if answer == 0 and woke:
                    f = C_SENDER_BUFFER
                # ...unless the round after the pause carried clearly more than the one before
                # it (a congestion window growing round by round), or ended the transfer
                # (undecided).
                h_next = search_one(t, next_round, t1, i, 0.9 * base_rtt, 0.0, False, h_next)
                nr = h_next - 1
                grew = high_all[max(nr, 0)] - high[i] > 1.5 * max(flight[i], seg)
                if answer == 0 and (grew or nr >= n - 1) and not lost_before:
                    f = C_SLOW_START
                label[i] = f
                continue
            # 5. paused although ACKs freed room and data was outstanding -- unless a queue
            # stood at the bottleneck: a round trip above its minimum means more than the
            # path's bandwidth-delay product was in flight (Kleinrock's operating point, the
            # model of BBR, Cardwell et al. 2016), so no cap at the sender held it; the pause
            # is the ACK clock of a full link (or the kernel's own TSQ/pacing), step 6's case
            if (
                gap > pause_gap
                and (ack_v - _at(ack_cum, at_start[i], 0)) >= 2 * seg
                and rtt_now[i] <= inflated
            ):
                label[i] = C_SENDER_BUFFER
                continue
        # 6. the congestion window -- unless the pause outlasted any round trip: with data
        # outstanding, nothing lost (no retransmission ends it) and no ACK freeing room, a
        # pause of ``idle_after`` (4 RTT, at least 0.5 s) is a silent peer or a keep-alive,
        # not a window growing (a keep-alive connection idle for 60 s is not 60 s of slow
        # start, nor thousands of round trips)
        if gap > pause_idle:
            label[i] = -1
            continue
        if rtt_now[i] > inflated:
            f = C_BANDWIDTH
        elif lost_before:
            f = C_LOSS
            # One burst of drops when slow start first overflowed the queue is TCP starting on
            # a full path; drops at a full queue rarer than RARE_LOSS_RTTS round trips are
            # probing it.
            if first_queued_drop and r_t[r] <= end[0]:
                f = C_SLOW_START
            elif rare_drops:
                f = C_BANDWIDTH
            elif full_rate < np.inf:
                # The link stayed full after the loss (BBR keeps its rate and its queue
                # short, so the round trip does not show it): what held the sender was the
                # path's rate, not a window the loss had cut.
                h_round = search_one(
                    ack_t, round_after, t0, i, base_rtt - lag, rate_tol, True, h_round
                )
                acked = _at(ack_cum, h_round - 1, 0) - _at(ack_cum, at_start[i], 0)
                if acked >= full_rate * base_rtt:
                    f = C_BANDWIDTH
        else:
            # Without loss the congestion window never shrinks: in flight below what the
            # sender already had out (with the receiver's window room for it) is the data it
            # had to send.
            f = C_SLOW_START
            h_earlier = search_one(t0, earlier, t0, i, -(2.0 * base_rtt), 0.0, True, h_earlier)
            e = h_earlier - 1
            stalled = False
            if e >= 0 and restart[e] == restart[i] and base_rtt > 0:
                flight_upto = max(flight_before[i], flight[i])
                stalled = flight_upto - max(flight_before[e], flight[e]) < seg
            room = (edge_v - ack_v) >= flight_before[i] + 2 * seg
            if (flight[i] < 0.9 * flight_before[i] or stalled) and room:
                f = C_SENDER_BUFFER
        label[i] = f
    return label, stall_s
