"""nagle-delayed-ack: small writes stalled by Nagle's algorithm waiting for a delayed ACK.

What it detects
    A segment smaller than a full one, then nothing until its ACK arrives — a pure ACK, later
    than the round trip explains by at least 25 ms — and then, at once, the next segment of the
    same sender. Nagle's algorithm (RFC 896, RFC 1122 §4.2.3.4) holds small data while earlier
    small data is unacknowledged, and the receiver holds its ACK hoping to piggyback it on a
    response (delayed ACK: 40 ms minimum on Linux, 200 ms on Windows, 100 ms on macOS). Neither
    moves until the timer fires. The classic case is a request written in two ``write()`` calls
    (header, then body).

Why it matters
    Every such message pays the delayed-ACK timer on top of the round trip: 40-200 ms per
    request on a path of a few milliseconds.

What to do
    Write each message with one call (build it in a buffer, or ``writev``/``sendmsg``), or set
    ``TCP_NODELAY`` on the sending socket; ``TCP_CORK``/``MSG_MORE`` when the parts come
    separately.

Thresholds
    The delay beyond the round trip is measured with the flow's own minimum RTT and the capture
    point's lag, so it is the receiver's timer at any RTT; 25 ms is below every common
    delayed-ACK minimum and above scheduling jitter. The resume must follow the ACK within
    max(2 ms, 10 % RTT).
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding

CODE = "nagle-delayed-ack"
FACTOR: Factor = "nagle_delayed_ack"
MIN_STALLS = 2  # one stall can be a coincidence; two is a pattern


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    if sum(ft.intervals.values()) < MIN_STALLS:
        return []
    sp = ctx.intervals(FACTOR, ft.flows)
    stalls = sp.stall_s
    # Without Nagle the rest would have left at once: the whole wait is lost, the round trip
    # for the ACK and the receiver's delayed-ACK timer on top of it.
    lost = float(sp.duration.sum())
    flows = ft.flows
    worst = flows[0]
    tr = ctx.transfer(worst)
    conn = ctx.by_flow[worst]
    if tr is None:
        return []
    i = np.minimum(np.searchsorted(tr.frame, sp.frame0[sp.flow == worst]), tr.frame.size - 1)
    small = tr.seq_end[i] - tr.seq[i]
    rtt = conn.min_rtt_s
    summary = (
        f"{sp.t0.size} times, {tr.sender} sent a small segment ({w.size(float(np.median(small)))} "
        f"typically) and then waited for its ACK before sending the rest: {tr.receiver} delayed "
        f"that ACK by {w.duration(float(np.median(stalls)))} (its delayed-ACK timer) "
        f"beyond the round trip"
    )
    if rtt:
        summary += f" of {w.duration(rtt)}"
    summary += (
        f", and Nagle's algorithm held the next data until it came. Each such message waited "
        f"{w.duration(float(np.median(sp.duration)))} for its second part; in all "
        f"{w.duration(lost)}."
    )
    fix = (
        f"On {tr.sender.rsplit(':', 1)[0]}, write each message with a single call (assemble "
        "header and body in one buffer, or use writev/sendmsg), or set TCP_NODELAY on the "
        "socket."
    )
    frames = [int(x) for x in np.concatenate((sp.frame0[:10], sp.frame1[:10]))]
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, lost, flows=tuple(flows)),
            title=f"Nagle + delayed ACK: {sp.t0.size} stalls of {w.duration(float(np.median(stalls)))}",
            summary=summary,
            fix=fix,
            time_lost_s=lost,
            flows=flows,
            evidence=evidence_of(
                sp,
                frames,
                stalls=int(sp.t0.size),
                median_stall_ms=round(float(np.median(stalls)) * 1e3, 3),
            ),
        )
    ]
