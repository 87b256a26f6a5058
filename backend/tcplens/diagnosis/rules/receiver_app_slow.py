"""receiver-app-slow: the receiving application did not read fast enough.

What it detects
    Time in which the sender had filled the receiver's advertised window while that window was
    below 3/4 of the largest one the receiver had offered before (down to zero): the
    receiver's buffer was full of data its application had not read yet. The window then opens
    in steps when the application reads (Wireshark's ``window_update``), or stays at zero and the
    sender probes it (``zero_window_probe``).

Why it matters
    No network or TCP setting helps: the bytes arrive as fast as the receiving program consumes
    them. A bigger buffer only delays the moment it fills.

What to do
    Look at the receiving program: read in larger chunks, do not block the reading loop on disk
    or processing (hand data to a worker), or read more often.

Thresholds
    "3/4 of the largest window offered so far" is a ratio of the receiver's own numbers, so it
    holds for any buffer size and RTT; it is a running maximum so that a window still growing by
    autotuning early in a transfer is not mistaken for a full buffer. On zero_window_slow_reader
    (8 KB buffer, 4 KB read every 30 ms) 69 % of the time is labelled this way; on
    rcvbuf_locked_download (fast reader, small buffer) none is.
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.measure import delivered_bytes, of_transfer, scale_note
from tcplens.diagnosis.timeline import UNREAD_WINDOW

CODE = "receiver-app-slow"
FACTOR: Factor = "receiver_app"
MIN_SHARE = 0.05


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    flows = ctx.flows_held_by(FACTOR, MIN_SHARE)
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    if tr is None:
        return []
    mine = of_transfer(tr, ctx.intervals(FACTOR, [worst]))
    known = tr.window[tr.window >= 0]
    largest = int(known.max()) if known.size else 0
    zero = np.flatnonzero(tr.window == 0)
    small = np.flatnonzero((tr.window >= 0) & (tr.window < UNREAD_WINDOW * largest))
    got = delivered_bytes(tr, mine) / max(float(mine.duration.sum()), 1e-9)
    rtt = conn.min_rtt_s
    total = ctx.wall_clock(FACTOR, flows)
    receiver_host = tr.receiver.rsplit(":", 1)[0]
    closed = (
        f"advertised a zero window {w.times(zero.size)}"
        if zero.size
        else f"let its window shrink to {w.size(int(known.min()) if known.size else 0)}"
    )
    offered = f"of a receive window of up to {w.size(largest)} it" if largest else "it"
    summary = (
        f"For {w.duration(ft.seconds[worst])} of flow {worst}'s "
        f"{w.duration(conn.duration_s)}, {tr.receiver} had data in its buffer that its "
        f"application had not read: {offered} {closed}"
    )
    if largest:
        summary += (
            f" ({small.size} of its {tr.window.size} ACKs offered less than three quarters of it)"
        )
    summary += f", and {tr.sender} had to wait for it to read.{scale_note(tr)}"
    if mine.t0.size:
        summary += (
            f" Data moved at {w.rate(got)} during that time, the pace at which the application "
            "consumed it"
        )
        if rtt and largest:
            summary += f"; the window alone would have allowed {w.rate(largest / rtt)}"
        summary += "."
    stuck = np.flatnonzero(~tr.zero_reopened)
    if stuck.size:
        since = float(tr.zero_end[stuck[-1]] - tr.zero_start[stuck[-1]])
        summary += (
            f" The window was still zero when the capture ended, {w.duration(since)} after it "
            f"closed: the application stopped reading, and {tr.sender} could only probe it."
        )
    fix = (
        f"The network is not the problem: make the application on {receiver_host} read faster — "
        "larger reads, a reading loop that does not wait on disk or processing (hand the data to "
        "a worker), or more frequent reads. A larger receive buffer only postpones the stall."
    )
    frames = [int(x) for x in tr.ack_frame[zero[:10]]] + [int(x) for x in tr.ack_frame[small[:10]]]
    frames += [int(x) for x in tr.zero_frames[:10].ravel()]
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=(
                "Receiving application stopped reading: its window stayed zero"
                if stuck.size
                else f"Receiving application too slow: it read at {w.rate(got)}"
                if mine.t0.size
                else "Receiving application too slow: its window closed"
            ),
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(
                ft.runs,
                frames,
                zero_window_acks=int(zero.size),
                largest_window_bytes=largest,
                read_rate_bps=round(got * 8),
                window_scale=tr.window_scale,
                window_scale_inferred=tr.window_scale_inferred,
            ),
        )
    ]
