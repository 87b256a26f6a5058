"""packet-loss: retransmissions and the congestion-window cuts that follow them.

What it detects
    Time spent recovering from loss (from a retransmission until the data outstanding then is
    acknowledged, and pauses that end in a retransmission — a retransmission timeout), plus
    time after a loss in which the sender was held by its congestion window while the round
    trip showed no queue and the receiver acknowledged less than the path carries: the window
    was small because loss had cut it, not because the path was full.

Why it matters
    TCP reads loss as congestion and halves its rate (Cubic: × 0.7); with random loss of p the
    rate is bounded near MSS / (RTT · √p) (Mathis et al. 1997), so 1 % loss at 30 ms caps a
    flow around 4 Mbit/s whatever the path's capacity. A retransmission timeout costs a
    minimum of 200 ms on Linux.

What to do
    Find where packets are dropped: the counters of the interfaces, switches and Wi-Fi links
    on the path (errors, discards), a policer or a full queue. Where the capture point sits
    says which side of it the loss is.

Thresholds
    Reported when loss-labelled time is at least 10 % of the connection's time. Drops at a full
    drop-tail queue are TCP finding the path's limit, not a lossy path: a recovery that began
    while the round trip was inflated by the queue counts as ``bandwidth``, the regrowth after a
    first slow-start overshoot as ``slow_start``, and when such drops come rarely (fewer than one
    episode per 20 round trips) the regrowth between them as ``bandwidth`` too. Random loss of
    0.5-2 % recurs every 1-7 round trips on the lab's paths and stays ``loss``. A round after
    a loss whose flight was acknowledged at 0.85 of the path's rate or more (the rate its ACK
    pairs show, Keshav's packet pair; ``thresholds.FULL_LINK``) is ``bandwidth``: the loss cut
    no window (BBR keeps its rate and a short queue, so the round trip does not grow).
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding

CODE = "packet-loss"
FACTOR: Factor = "loss"
MIN_SHARE = 0.1


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
    rtx = np.flatnonzero(tr.retransmission)
    segments = tr.t.size
    rtt = conn.min_rtt_s
    total = ctx.wall_clock(FACTOR, flows)
    rate = tr.payload_bytes / max(float(tr.t[-1] - tr.t[0]), 1e-9) if segments > 1 else 0.0
    near_sender = rtt is not None and tr.lag_s < 0.25 * rtt
    where = (
        "The capture saw the original segments, so they were lost between the capture point and "
        f"{tr.receiver}."
        if near_sender
        else f"The capture point is near {tr.receiver}: the segments were lost on the way from "
        f"{tr.sender} to it."
    )
    summary = (
        f"{tr.sender} retransmitted {rtx.size} of {segments} data segments "
        f"({w.share(rtx.size / max(segments, 1))}) in flow {worst}; recovering from the losses "
        f"and the smaller congestion window that followed held the transfer for "
        f"{w.duration(ft.seconds[worst])} of its {w.duration(conn.duration_s)}, and it "
        f"averaged {w.rate(rate)}. {where}"
    )
    if len(flows) > 1:
        summary += f" {len(flows)} flows lost data, {w.duration(total)} in all."
    fix = (
        "Find the drops: check error and discard counters on the interfaces, switches and Wi-Fi "
        "links between the capture point and the receiver, and any policer or overflowing "
        "queue on that path."
    )
    frames = [int(x) for x in tr.frame[rtx[:MAX_FRAMES_LOSS]]]
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"Packet loss: {rtx.size} retransmissions held the transfer back",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(ft.runs, frames, retransmissions=int(rtx.size)),
        )
    ]


MAX_FRAMES_LOSS = 30
