"""Every connection's labelled time in one compiled call, read straight from the TCP analysis.

``gather_transfer`` cuts one direction of one flow out of the columnar analysis (Segments,
RttSamples, ZeroWindowSpans) as a transfer's arrays; ``label_connection`` labels a connection
from its transfers (handshake, first turn, main transfer, zero-window time around it; the why
is in timeline.py); ``label_flows`` does both for every chosen connection, in parallel across
connections, each writing its own rows of the output: deterministic, and no per-connection
Python.

The kernels are cached in the core's kernel cache (``tcplens.kernel_cache``), keyed on every
module of the core.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.diagnosis.labelling import (
    C_APPLICATION,
    C_LATENCY,
    C_RECEIVER_APP,
    C_SETUP,
    N_FACTORS,
    _sender_jitter,
    label_transfer,
)
from tcplens.diagnosis.thresholds import EDGE_HITS

# Layout of one transfer's arrays as the kernels pass them around (a tuple: numba types it
# field by field): see transfer.Transfer for what each one is.
T_T, T_FRAME, T_SEQ, T_SEQ_END, T_RETRANS = 0, 1, 2, 3, 4
T_ACK_T, T_ACK_FRAME, T_ACK, T_WINDOW, T_ACK_PAYLOAD = 5, 6, 7, 8, 9
T_RTT_T, T_RTT_S, T_ECHO_T, T_ECHO_S = 10, 11, 12, 13
T_ZERO_START, T_ZERO_END, T_ZERO_FRAME0, T_ZERO_FRAME1, T_ZERO_REOPENED = 14, 15, 16, 17, 18
T_LAG, T_MSS = 19, 20


@numba.njit(cache=True)
def min_rtt(tx0, tx1, handshake_rtt_s):  # type: ignore[no-untyped-def]
    """Smallest round trip seen: handshake, data->ACK plus ACK->data halves; 0 if none (see
    ``transfer.Connection.min_rtt_s``)."""
    best = np.inf
    if handshake_rtt_s == handshake_rtt_s and handshake_rtt_s > 0:
        best = handshake_rtt_s
    for tx in (tx0, tx1):
        if tx[T_T].size and tx[T_RTT_S].size:
            best = min(best, tx[T_RTT_S].min() + tx[T_LAG])
    return best if best < np.inf else 0.0


@numba.njit(cache=True)
def _payload_bytes(tx):  # type: ignore[no-untyped-def]
    """Unique payload bytes of a transfer, or of its sender's half (``_gather_data``: the same
    first fields); -1 without data."""
    return tx[T_SEQ_END].max() - tx[T_SEQ].min() if tx[T_T].size else -1


@numba.njit(cache=True)
def _put(out, pos, open_run, seconds, counts, merge, flow, t0, t1, factor, frame0, frame1, stall):  # type: ignore[no-untyped-def]
    """Add one interval to ``out`` at row ``pos`` and its time to ``seconds`` and ``counts``
    (per factor); with ``merge``, extend the run in row ``pos - 1`` instead when it continues
    it (``open_run``: that row may be extended). Returns the next free row and whether it is
    open. A run is a sequence of consecutive intervals of one factor, each starting where the
    previous one ended and none ending before it starts: one interval from the first start to
    the last end (the largest ending frame, the summed stall). ``context.evidence_of`` merges
    touching intervals into the same ranges from a run as from its members, and a transfer's
    labelled time is a few hundred runs instead of an interval per data segment. The seconds
    are added in the intervals' order, one factor at a time, as a weighted ``np.bincount`` over
    them adds them: the same float sums, bit for bit."""
    o_flow, o_t0, o_t1, o_factor, o_frame0, o_frame1, o_stall = out
    if factor >= 0:
        seconds[factor] += t1 - t0
        counts[factor] += 1
    mergeable = t1 >= t0
    if merge and open_run and mergeable and factor == o_factor[pos - 1] and t0 == o_t1[pos - 1]:
        o_t1[pos - 1] = t1
        o_frame1[pos - 1] = max(o_frame1[pos - 1], frame1)
        o_stall[pos - 1] += stall
        return pos, True
    o_flow[pos], o_t0[pos], o_t1[pos], o_factor[pos] = flow, t0, t1, factor
    o_frame0[pos], o_frame1[pos], o_stall[pos] = frame0, frame1, stall
    return pos + 1, mergeable and merge


@numba.njit(cache=True)
def label_connection(  # type: ignore[no-untyped-def]
    tx0, tx1, flow, start_s, syn_s, established_s, handshake_rtt_s, first_frame, syn_frame,
    out, pos,
):  # fmt: skip
    """Labelled time of one connection into ``out`` from row ``pos``, an interval per row: the
    handshake, the first turn, and the main transfer's intervals (timeline.py
    ``label_connection``). ``tx0``/``tx1`` are its transfers in order (no data: absent).
    Returns the next free row."""
    seconds, counts = np.zeros(N_FACTORS), np.zeros(N_FACTORS, np.int64)
    return _label_connection(tx0, tx1, flow, start_s, syn_s, established_s, handshake_rtt_s,
                             first_frame, syn_frame, out, pos, seconds, counts, False)  # fmt: skip


@numba.njit(cache=True)
def _label_connection(  # type: ignore[no-untyped-def]
    tx0, tx1, flow, start_s, syn_s, established_s, handshake_rtt_s, first_frame, syn_frame,
    out, pos, seconds, counts, merge,
):  # fmt: skip
    """``label_connection``, adding each interval's time to ``seconds`` and ``counts`` (per
    factor) and, with ``merge``, writing runs of intervals instead (``_put``)."""
    open_run = False
    base_rtt = min_rtt(tx0, tx1, handshake_rtt_s)
    if syn_s == syn_s and established_s == established_s:
        pos, open_run = _put(out, pos, open_run, seconds, counts, merge, flow, syn_s,
                             established_s, C_SETUP, syn_frame, first_frame,
                             established_s - syn_s)  # fmt: skip
    if tx0[T_T].size == 0 and tx1[T_T].size == 0:
        return pos
    # The transfer with the most payload is labelled over its span (the first one on a tie).
    main_is_1 = _payload_bytes(tx1) > _payload_bytes(tx0)
    main = tx1 if main_is_1 else tx0
    other = tx0 if main_is_1 else tx1
    t = main[T_T]
    turn_start = established_s if established_s == established_s else start_s
    slow_turn = 2.0 * base_rtt + 0.05  # a round trip each way and some scheduling
    first = first_frame
    if other[T_T].size and other[T_T][0] < t[0]:  # a request preceded it: the turn starts there
        asked = other[T_T][0]
        first = other[T_FRAME][0]
        if established_s == established_s and asked - established_s > slow_turn:
            # the client's own delay between the handshake and its request
            pos, open_run = _put(out, pos, open_run, seconds, counts, merge, flow,
                                 established_s, asked, C_APPLICATION, first_frame, first,
                                 asked - established_s)  # fmt: skip
        turn_start = asked
    turn = t[0] - turn_start
    if turn > 0:
        factor = C_LATENCY if turn <= slow_turn else C_APPLICATION
        pos, open_run = _put(out, pos, open_run, seconds, counts, merge, flow, turn_start, t[0],
                             factor, first, main[T_FRAME][0], turn)  # fmt: skip
    label, stall = label_transfer(
        t, main[T_SEQ], main[T_SEQ_END], main[T_RETRANS], main[T_ACK_T], main[T_ACK],
        main[T_WINDOW], main[T_ACK_PAYLOAD], main[T_RTT_T], main[T_RTT_S], main[T_ECHO_T],
        main[T_ECHO_S], main[T_LAG], main[T_MSS], base_rtt,
    )  # fmt: skip
    frame = main[T_FRAME]
    # (``_put`` for each interval, with the open run's changing fields in registers: written
    # back when it closes)
    o_flow, o_t0, o_t1, o_factor, o_frame0, o_frame1, o_stall = out
    run_f = np.int8(-2)
    run_t1, run_frame1, run_stall = 0.0, np.int64(0), 0.0
    if open_run:
        run_f, run_t1 = o_factor[pos - 1], o_t1[pos - 1]
        run_frame1, run_stall = o_frame1[pos - 1], o_stall[pos - 1]
    for i in range(label.size):
        f, t0, t1 = label[i], t[i], t[i + 1]
        if f >= 0:
            seconds[f] += t1 - t0
            counts[f] += 1
        mergeable = t1 >= t0
        if merge and open_run and mergeable and f == run_f and t0 == run_t1:
            run_t1 = t1
            run_frame1 = max(run_frame1, frame[i + 1])
            run_stall += stall[i]
            continue
        if open_run:
            o_t1[pos - 1], o_frame1[pos - 1], o_stall[pos - 1] = run_t1, run_frame1, run_stall
        o_flow[pos], o_t0[pos], o_factor[pos], o_frame0[pos] = flow, t0, f, frame[i]
        run_f, run_t1, run_frame1, run_stall = f, t1, frame[i + 1], stall[i]
        o_t1[pos], o_frame1[pos], o_stall[pos] = t1, frame[i + 1], stall[i]
        pos += 1
        open_run = mergeable and merge
    if open_run:
        o_t1[pos - 1], o_frame1[pos - 1], o_stall[pos - 1] = run_t1, run_frame1, run_stall
    # Zero-window time outside the span of the data segments (receiver_app): after the last
    # one (a receiver that never reads again: the sender only probes) or before the first (a
    # capture that starts mid-stall) nothing else would say it.
    z0, z1 = main[T_ZERO_START], main[T_ZERO_END]
    zf0, zf1 = main[T_ZERO_FRAME0], main[T_ZERO_FRAME1]
    last = t[t.size - 1]
    for z in range(z0.size):
        a = max(z0[z], last)
        if z1[z] > a:
            pos, open_run = _put(out, pos, open_run, seconds, counts, merge, flow, a, z1[z],
                                 C_RECEIVER_APP, zf0[z], zf1[z], z1[z] - a)  # fmt: skip
    for z in range(z0.size):
        b = min(z1[z], t[0])
        if b > z0[z]:
            pos, open_run = _put(out, pos, open_run, seconds, counts, merge, flow, z0[z], b,
                                 C_RECEIVER_APP, zf0[z], zf1[z], b - z0[z])  # fmt: skip
    return pos


@numba.njit(cache=True)
def gather_transfer(  # type: ignore[no-untyped-def]
    f, d, origin, seg, rtt, rtt_lo, rtt_hi, zw, zw_rows, rcv_scale, rcv_mss, sender_lag_ns,
    codes,
):  # fmt: skip
    """One direction ``d`` of flow row ``f`` as a transfer's arrays (the layout above), read
    straight from the TCP analysis: the sender's data segments, the receiver's segments
    carrying an ACK, this direction's data->ACK RTT samples and the timestamp echoes through
    the sender, the receiver's zero-window spans. Times in seconds since ``origin`` (ns).

    ``seg`` = (offsets, time_ns, frame, seq, payload_len, ack, window, flags) of Segments (seq
    and ack mod 2**32, unwrapped here as each direction is read in order),
    ``rtt`` = (kind, direction, row, rtt_ns) of RttSamples (rows ``rtt_lo:rtt_hi`` are
    this flow's) and Segments.time_ns (a sample's time is its row's), ``zw`` = (start_ns, end_ns, start_frame, end_frame, reopened, direction) of
    ZeroWindowSpans (``zw_rows`` this flow's, in their order); ``codes`` = (ACK flag,
    RTT_DATA_ACK, RTT_TIMESTAMP, RESENT_FLAG): a data segment's ``flags`` say whether it was
    re-sent (tcp.resent).
    """
    samples = _gather_samples(origin, rtt, rtt_lo, rtt_hi, codes)[d]
    data = _gather_data(f, d, origin, seg, codes[3], samples, rcv_mss, sender_lag_ns)
    acks, shift = _scaled_acks(data, _gather_acks(f, d, origin, seg, zw, zw_rows, codes), rcv_scale)
    (t, fr, seq, seq_end, retrans, ack_t, ack_frame, ack, win, ack_payload, rtt_t, rtt_s, echo_t,
     echo_s, zs, ze, zf0, zf1, zr, lag, mss) = _transfer(data, acks)  # fmt: skip
    return (t, fr, seq, seq_end, retrans, ack_t, ack_frame, ack, win, ack_payload, rtt_t, rtt_s,
            echo_t, echo_s, zs, ze, zf0, zf1, zr, lag, mss, shift)  # fmt: skip


@numba.njit(cache=True)
def _scaled_acks(data, acks, rcv_scale):  # type: ignore[no-untyped-def]
    """The receiver's half with its windows in bytes, and the shift they were read with: the
    handshake's (``rcv_scale`` >= 0: the TCP analysis already scaled them, shift -1 says so), or
    one inferred from the data when the handshake was not captured (``infer_window_scale``);
    when none can be inferred every window but zero is unknown (-1): never read as zero."""
    ack_t, ack_frame, ack, win, ack_payload, zs, ze, zf0, zf1, zr = acks
    if rcv_scale >= 0:
        return acks, np.int64(-1)
    t, _, _, seq_end, _, _, _, _, _, lag, _ = data
    shift = infer_window_scale(t, seq_end, ack_t, ack, win, lag)
    scaled = np.empty(win.size, np.int64)
    for j in range(win.size):
        if shift >= 0:
            scaled[j] = win[j] << shift
        else:
            scaled[j] = 0 if win[j] == 0 else -1
    return (ack_t, ack_frame, ack, scaled, ack_payload, zs, ze, zf0, zf1, zr), shift


@numba.njit(cache=True)
def infer_window_scale(t, seq_end, ack_t, ack, raw, lag):  # type: ignore[no-untyped-def]
    """The receiver's window scale (RFC 7323 §2.2) inferred from the data, -1 when the data
    cannot say: no window above zero, no round trip to place the sender's view, or a sender the
    window never held.

    A sender never sends beyond the right edge it knows (RFC 9293 §3.8.6.2.1: ack + window of an
    ACK that reached it before the segment left); at the capture point that is an ACK seen at
    least ``lag`` (capture point -> sender -> capture point, less 20 % jitter, as the labelling
    places the sender's view) before the segment. The candidate is the smallest shift for which
    no segment ends beyond such an edge. It is the receiver's only if the sender was held there:
    a sender the window holds sends up to the edge itself (Linux's tcp_write_xmit splits the
    segment that crosses it at the edge, tcp_mss_split_point), so segments end exactly at ack +
    (window << shift) of an ACK it had just received, Wireshark's ``tcp.analysis.window_full``
    (packet-tcp.c: seq + seglen == the reverse direction's lastack + window << win_scale), and
    any smaller shift puts them beyond it. A sender something else held (its buffer, its
    congestion window, its application) fits under a smallest shift that gives a window within
    x2 of its flight, only a lower bound of the receiver's (whose shift is chosen once, for the
    largest receive buffer it may use, RFC 7323 §2.3), and its segments end at such an edge only
    by chance: fewer than ``EDGE_HITS`` of them, and no scale is inferred (the window is
    unknown, never a limit). A lag of 0 means no RTT sample placed the sender's view: at a
    receiver-side capture the fresh ACKs would fit any shift, so none is inferred."""
    m = ack_t.size
    positive = False
    for j in range(m):
        positive |= raw[j] > 0
    if not positive or t.size == 0 or lag <= 0.0:
        return np.int64(-1)
    for shift in range(15):
        j = 0
        edge = np.int64(-1)
        fits = True
        for i in range(t.size):
            received, _ = _just_received(ack_t, j, t[i], lag)
            for k in range(j, received):
                edge = max(edge, ack[k] + (raw[k] << shift))
            j = received
            # (one byte beyond: a zero-window probe, RFC 9293 §3.8.6.1)
            if edge >= 0 and seq_end[i] > edge + 1:
                fits = False
                break
        if fits:
            return (
                np.int64(shift)
                if _edge_hits(t, seq_end, ack_t, ack, raw, lag, shift) >= EDGE_HITS
                else np.int64(-1)
            )
    return np.int64(-1)


@numba.njit(cache=True, inline="always")
def _just_received(ack_t, j, t, lag):  # type: ignore[no-untyped-def]
    """The ACKs the sender had just received when it sent the segment seen at ``t``: those seen
    ``lag`` before it (capture point -> sender -> capture point, as the labelling places the
    sender's view), give or take ``sender_jitter(lag)``. Returns how many it had received (those
    seen up to ``lag`` less the allowance before ``t``; counted on from ``j``, an earlier
    segment's answer) and the time before which an ACK was no longer fresh (``lag`` plus the
    allowance before ``t``)."""
    jitter = _sender_jitter(lag)
    while j < ack_t.size and ack_t[j] <= t - lag + jitter:
        j += 1
    return j, t - lag - jitter


@numba.njit(cache=True)
def _edge_hits(t, seq_end, ack_t, ack, raw, lag, shift):  # type: ignore[no-untyped-def]
    """How many segments end exactly at the right edge (ack + (window << shift), a window above
    zero) of an ACK the sender had just received (``_just_received``): one seen within the
    allowance of ``lag`` before the segment, or the latest before those."""
    hits = 0
    j = 0
    for i in range(t.size):
        j, older = _just_received(ack_t, j, t[i], lag)
        k = j - 1
        while k >= 0:
            if raw[k] > 0 and seq_end[i] == ack[k] + (raw[k] << shift):
                hits += 1
                break
            if ack_t[k] < older:
                break
            k -= 1
    return hits


@numba.njit(cache=True)
def _transfer(data, acks):  # type: ignore[no-untyped-def]
    """A transfer's arrays in the layout above from its sender's and its receiver's halves."""
    t, fr, seq, seq_end, retrans, rtt_t, rtt_s, echo_t, echo_s, lag, mss = data
    ack_t, ack_frame, ack, win, ack_payload, zs, ze, zf0, zf1, zr = acks
    return (t, fr, seq, seq_end, retrans, ack_t, ack_frame, ack, win, ack_payload,
            rtt_t, rtt_s, echo_t, echo_s, zs, ze, zf0, zf1, zr, lag, mss)  # fmt: skip


@numba.njit(cache=True)
def _no_acks():  # type: ignore[no-untyped-def]
    """The receiver's half of a transfer that is not labelled (``label_connection`` reads only
    the sender's half of the other transfer)."""
    e, i = np.empty(0), np.empty(0, np.int64)
    return e, i, i, i, i, e, e, i, i, np.empty(0, np.bool_)


@numba.njit(cache=True)
def _gather_samples(origin, rtt, rtt_lo, rtt_hi, codes):  # type: ignore[no-untyped-def]
    """A flow's RTT samples (rows ``rtt_lo:rtt_hi``) as its two transfers read them, in one
    pass: for each direction d, d's data->ACK samples and the timestamp echoes through d's
    sender (direction 1 - d's samples), times and round trips in seconds."""
    kind, direction, r_row, r_rtt, seg_time = rtt
    kind_data_ack, kind_timestamp = codes[1], codes[2]
    size = rtt_hi - rtt_lo  # (one pass into arrays sized for every sample, then cut)
    own_t0, own_s0 = np.empty(size), np.empty(size)
    echo_t0, echo_s0 = np.empty(size), np.empty(size)
    own_t1, own_s1 = np.empty(size), np.empty(size)
    echo_t1, echo_s1 = np.empty(size), np.empty(size)
    n_own0 = n_own1 = n_echo0 = n_echo1 = 0
    for r in range(rtt_lo, rtt_hi):
        k, d = kind[r], direction[r]
        if k == kind_data_ack and d == 0:
            own_t0[n_own0], own_s0[n_own0] = (seg_time[r_row[r]] - origin) / 1e9, r_rtt[r] / 1e9
            n_own0 += 1
        elif k == kind_data_ack and d == 1:
            own_t1[n_own1], own_s1[n_own1] = (seg_time[r_row[r]] - origin) / 1e9, r_rtt[r] / 1e9
            n_own1 += 1
        elif k == kind_timestamp and d == 1:  # the other direction's TSval, echoed by sender 0
            echo_t0[n_echo0], echo_s0[n_echo0] = (seg_time[r_row[r]] - origin) / 1e9, r_rtt[r] / 1e9
            n_echo0 += 1
        elif k == kind_timestamp and d == 0:
            echo_t1[n_echo1], echo_s1[n_echo1] = (seg_time[r_row[r]] - origin) / 1e9, r_rtt[r] / 1e9
            n_echo1 += 1
    return (
        (own_t0[:n_own0], own_s0[:n_own0], echo_t0[:n_echo0], echo_s0[:n_echo0]),
        (own_t1[:n_own1], own_s1[:n_own1], echo_t1[:n_echo1], echo_s1[:n_echo1]),
    )


@numba.njit(cache=True)
def _gather_data(f, d, origin, seg, resent_flag, samples, rcv_mss, sender_lag_ns):  # type: ignore[no-untyped-def]
    """The sender's half of ``gather_transfer``: its data segments, its RTT samples (``samples``:
    ``_gather_samples``' of direction ``d``), lag, MSS."""
    offsets, time_ns, frame, seqs, payload, _, _, flags = seg
    a, b = offsets[2 * f + d], offsets[2 * f + d + 1]
    # Each gather is one pass into arrays sized for every candidate row, cut to the rows it
    # kept (a counting pass first cost as much again).
    t = np.empty(b - a)
    fr = np.empty(b - a, np.int64)
    seq = np.empty(b - a, np.int64)
    seq_end = np.empty(b - a, np.int64)
    retrans = np.empty(b - a, np.bool_)
    n = 0
    s = np.int64(0)
    for r in range(a, b):
        # Segments.seq holds the number mod 2**32: the direction's running unwrap (model.unwrap)
        s += np.int64(np.int32(np.int64(seqs[r]) - s))
        if payload[r] > 0:
            t[n] = (time_ns[r] - origin) / 1e9
            fr[n] = frame[r]
            seq[n] = s
            seq_end[n] = s + payload[r]
            retrans[n] = (flags[r] & resent_flag) != 0
            n += 1
    t, fr, seq, seq_end, retrans = t[:n], fr[:n], seq[:n], seq_end[:n], retrans[:n]
    rtt_t, rtt_s, echo_t, echo_s = samples
    # The round trip from the capture point to the sender and back: the handshake splits the
    # round trip at the capture point, SYN -> SYN/ACK is the part through the server, SYN/ACK
    # -> ACK the part through the client (the caller passes the sender's part). No handshake:
    # the timestamp echo through the sender measures the same round trip.
    lag = sender_lag_ns / 1e9 if sender_lag_ns >= 0 else (echo_s.min() if echo_s.size else 0.0)
    mss = np.int64(rcv_mss)
    if mss <= 0:  # no MSS option: the largest payload sent
        mss = np.int64(1)
        for i in range(n):
            mss = max(mss, seq_end[i] - seq[i])
    return t, fr, seq, seq_end, retrans, rtt_t, rtt_s, echo_t, echo_s, lag, mss


@numba.njit(cache=True)
def _gather_acks(f, d, origin, seg, zw, zw_rows, codes):  # type: ignore[no-untyped-def]
    """The receiver's half of ``gather_transfer``: its ACKs (windows as the TCP analysis has
    them: in bytes when the scale is known, raw otherwise; ``_scaled_acks``) and zero-window
    spans."""
    offsets, time_ns, frame, _, payload, acks, window, flags = seg
    ack_flag = codes[0]
    a, b = offsets[2 * f + 1 - d], offsets[2 * f + 2 - d]
    ack_t = np.empty(b - a)  # (one pass, then cut: see _gather_data)
    ack_frame = np.empty(b - a, np.int64)
    ack = np.empty(b - a, np.int64)
    win = np.empty(b - a, np.int64)
    ack_payload = np.empty(b - a, np.int64)
    m = 0
    k = np.int64(0)
    for r in range(a, b):
        if (flags[r] & ack_flag) != 0:
            k += np.int64(np.int32(np.int64(acks[r]) - k))  # unwrapped (see _gather_data)
            ack_t[m] = (time_ns[r] - origin) / 1e9
            ack_frame[m] = frame[r]
            ack[m] = k
            win[m] = np.int64(window[r])
            ack_payload[m] = payload[r]
            m += 1
    ack_t, ack_frame, ack, win = ack_t[:m], ack_frame[:m], ack[:m], win[:m]
    ack_payload = ack_payload[:m]
    z_start, z_end, z_frame0, z_frame1, z_reopened, z_dir = zw
    nz = 0
    for z in zw_rows:
        nz += z_dir[z] == 1 - d
    zs = np.empty(nz)
    ze = np.empty(nz)
    zf0 = np.empty(nz, np.int64)
    zf1 = np.empty(nz, np.int64)
    zr = np.empty(nz, np.bool_)
    nz = 0
    for z in zw_rows:
        if z_dir[z] == 1 - d:
            zs[nz] = (z_start[z] - origin) / 1e9
            ze[nz] = (z_end[z] - origin) / 1e9
            zf0[nz], zf1[nz], zr[nz] = z_frame0[z], z_frame1[z], z_reopened[z]
            nz += 1
    return ack_t, ack_frame, ack, win, ack_payload, zs, ze, zf0, zf1, zr


@numba.njit(cache=True, parallel=True)
def label_flows(  # type: ignore[no-untyped-def]
    chosen, bound, parts, origin, seg, rtt, rtt_bounds, zw, zw_order, zw_bounds, flows,
    gather_codes, merge,
):  # fmt: skip
    """Label every chosen connection (flow rows, ascending) at once, in parallel across
    connections (``parts``: the connection boundaries of the parts the threads share out, see
    ``tcp.grouping.equal_work_parts``): each labels its intervals (at most ``bound[c + 1] -
    bound[c]``), adds them up per factor and writes them, (``merge``) each run as one (``_put``),
    after the previous connection of its part; then the blocks are packed.
    Returns the intervals (``timeline.Intervals``' columns), where each connection's begin, and
    per connection and factor the labelled seconds and the number of intervals. ``flows`` =
    (id, start_ns, syn_ns, handshake_ack_ns, first_frame, handshake_syn_rtt_ns,
    handshake_synack_rtt_ns, window_scale_client, window_scale_server, mss_client, mss_server)
    of Flows."""
    (fid, start_ns, syn_ns, est_ns, first_frame, syn_rtt, synack_rtt,
     scale_client, scale_server, mss_client, mss_server) = flows  # fmt: skip
    total = bound[-1]
    out = (
        np.empty(total, np.int64), np.empty(total), np.empty(total), np.empty(total, np.int8),
        np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total),
    )  # fmt: skip
    written = np.zeros(chosen.size, np.int64)
    first_row = np.zeros(chosen.size, np.int64)
    seconds = np.zeros((chosen.size, N_FACTORS))
    counts = np.zeros((chosen.size, N_FACTORS), np.int64)
    # Each part's connections on one thread (parts: about the same number of rows each), each
    # connection's rows right after the previous one's: a connection writes at most its bound's
    # rows, so a part stays within its connections' bounds, and the rows it writes (its runs)
    # lie together (at bound[c], each connection touched fresh pages of its own)
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for p in in_turn(taken, parts.size - 1):
            row = bound[parts[p]]
            for c in range(parts[p], parts[p + 1]):
                f = chosen[c]
                rows = zw_order[zw_bounds[f] : zw_bounds[f + 1]]
                hs_syn, hs_synack = syn_rtt[f], synack_rtt[f]
                # The receiver's window scale and MSS; the sender's lag is the handshake part through
                # the sender: SYN/ACK -> ACK when the client sends, SYN -> SYN/ACK when the server does.
                samples = _gather_samples(
                    origin, rtt, rtt_bounds[f], rtt_bounds[f + 1], gather_codes
                )
                resent = gather_codes[3]  # RESENT_FLAG of the segments' flags
                data0 = _gather_data(
                    f, 0, origin, seg, resent, samples[0], mss_server[f], hs_synack
                )
                data1 = _gather_data(f, 1, origin, seg, resent, samples[1], mss_client[f], hs_syn)
                # Only the main transfer (label_connection's choice) is labelled: the other one's ACKs
                # are not read, so they are not gathered.
                if _payload_bytes(data1) > _payload_bytes(data0):
                    tx0 = _transfer(data0, _no_acks())
                    acks1, _ = _scaled_acks(
                        data1, _gather_acks(f, 1, origin, seg, zw, rows, gather_codes),
                        scale_client[f],
                    )  # fmt: skip
                    tx1 = _transfer(data1, acks1)
                else:
                    acks0, _ = _scaled_acks(
                        data0, _gather_acks(f, 0, origin, seg, zw, rows, gather_codes),
                        scale_server[f],
                    )  # fmt: skip
                    tx0 = _transfer(data0, acks0)
                    tx1 = _transfer(data1, _no_acks())
                hs = (hs_syn + hs_synack) / 1e9 if hs_syn >= 0 and hs_synack >= 0 else np.nan
                syn_s = (syn_ns[f] - origin) / 1e9 if syn_ns[f] >= 0 else np.nan
                est_s = (est_ns[f] - origin) / 1e9 if est_ns[f] >= 0 else np.nan
                first = np.int64(first_frame[f])
                end = _label_connection(tx0, tx1, fid[f], (start_ns[f] - origin) / 1e9, syn_s, est_s,
                                        hs, first, first, out, row, seconds[c], counts[c],
                                        merge)  # fmt: skip
                first_row[c], written[c] = row, end - row
                row = end
    # Close the gaps between the connections' blocks.
    starts = np.zeros(chosen.size + 1, np.int64)
    for c in range(chosen.size):
        starts[c + 1] = starts[c] + written[c]
    n = starts[-1]
    packed = (
        np.empty(n, np.int64), np.empty(n), np.empty(n), np.empty(n, np.int8),
        np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n),
    )  # fmt: skip
    for c in numba.prange(chosen.size):
        src, dst = first_row[c], starts[c]
        for i in range(written[c]):
            packed[0][dst + i], packed[1][dst + i] = out[0][src + i], out[1][src + i]
            packed[2][dst + i], packed[3][dst + i] = out[2][src + i], out[3][src + i]
            packed[4][dst + i], packed[5][dst + i] = out[4][src + i], out[5][src + i]
            packed[6][dst + i] = out[6][src + i]
    return packed, starts, seconds, counts
