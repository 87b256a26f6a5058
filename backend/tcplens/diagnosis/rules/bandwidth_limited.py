"""bandwidth-limited: the path's bottleneck was full — nothing to tune on the hosts.

What it detects
    Time in which the sender was held by its congestion window while the round trip stood
    clearly above its minimum (by 25 % and at least 2 ms): a queue had built at the bottleneck
    link, which means the path was delivering all it could. And time after a loss in which the
    receiver kept acknowledging the sender's flight at the path's own rate (what its ACK pairs
    show, Keshav's packet pair): a sender that keeps a short queue (BBR) loses segments at the bottleneck without the
    round trip growing, and without slowing down.

Why it matters
    It is the healthy end state of a bulk transfer: the rate is the bottleneck's. Saying so
    plainly stops people tuning buffers that are not the problem. The queueing delay it added
    is worth knowing if interactive traffic shares the link (bufferbloat).

What to do
    Nothing on the hosts. A faster link, or, if the added delay hurts other traffic, an AQM
    (fq_codel, CAKE) at the bottleneck or BBR on the sender.

Thresholds
    Relative inflation (25 %) so it holds from 5 ms to 200 ms paths; with 1 % random loss and no
    queue the round trip stays within +15 % (lossy_download), with a 60 ms queue on a 30 ms
    path it doubles (bottleneck_download).
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.measure import delivered_bytes, of_transfer
from tcplens.diagnosis.thresholds import QUEUE_INFLATION, QUEUE_INFLATION_FLOOR_S
from tcplens.diagnosis.timeline import path_rate, rtt_at

CODE = "bandwidth-limited"
FACTOR: Factor = "bandwidth"
MIN_SHARE = 0.1


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    flows = ctx.flows_held_by(FACTOR, MIN_SHARE)
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    rtt = conn.min_rtt_s
    if tr is None or rtt is None:
        return []
    mine = of_transfer(tr, ctx.intervals(FACTOR, [worst]))
    got = delivered_bytes(tr, mine) / max(float(mine.duration.sum()), 1e-9)
    loaded = float(np.median(rtt_at(tr, mine.t0, rtt))) if mine.t0.size else rtt
    total = ctx.wall_clock(FACTOR, flows)
    held = f"For {w.duration(ft.seconds[worst])} of flow {worst}'s " + (
        f"{w.duration(conn.duration_s)}, the path itself was the limit: {tr.sender} "
        f"sent at {w.rate(got)}"
    )
    rate = path_rate(tr)
    extra: dict[str, object] = {}
    # the round trip mostly near its minimum: the time is the labelling's full-link rounds after
    # a loss (timeline.py, step 6), not a queue
    if loaded <= rtt + max(QUEUE_INFLATION_FLOOR_S, QUEUE_INFLATION * rtt) and rate < np.inf:
        retransmitted = int(tr.retransmission.sum())
        summary = (
            f"{held}, the rate at which the path delivered its segments back to back "
            f"({w.rate(rate)}, from the spacing of the receiver's ACKs), and the round trip "
            f"stayed within a quarter of its minimum of {w.duration(rtt)} ({w.duration(loaded)} "
            "at the median): the sender kept the bottleneck's queue short"
            + (
                f", and the {retransmitted} segments it retransmitted (drops where that short "
                "queue overflowed) did not slow it down"
                if retransmitted
                else ""
            )
            + ". Neither end's settings held this transfer back."
        )
        fix = (
            "Nothing to tune on the hosts: a faster link is the only way to go faster, and the "
            "sender already keeps the queue at the bottleneck short."
        )
        extra["path_rate_bps"] = round(rate * 8)
    else:
        summary = (
            f"{held} and the round trip grew from {w.duration(rtt)} to {w.duration(loaded)} as "
            "a queue built at the bottleneck — the link was delivering all it could. Neither "
            "end's settings held this transfer back."
        )
        fix = (
            "Nothing to tune on the hosts: a faster link is the only way to go faster. If the "
            f"{w.duration(max(loaded - rtt, 0.0))} of queueing delay hurts other traffic on that "
            "link, enable an AQM such as fq_codel or CAKE at the bottleneck, or use BBR on the "
            "sender."
        )
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"The path was the limit: {w.rate(got)} through a full bottleneck",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(
                ft.runs,
                None,
                rate_bps=round(got * 8),
                min_rtt_ms=round(rtt * 1e3, 3),
                loaded_rtt_ms=round(loaded * 1e3, 3),
                **extra,
            ),
        )
    ]
