"""application-delay: an application took long to send, while the network sat idle.

What it detects
    Pauses in which one side had everything acknowledged and nothing to send, and then sent —
    not a stop-and-wait rhythm (``stop-and-wait`` covers that) but single long waits: a server
    answering a request much later than the round trip explains (think time: a slow query, an
    upstream call), or a client that opened the connection and only later sent its request.
    The side that broke the silence is the one whose application held the transfer.

Why it matters
    No TCP or network setting shortens it; it is easy to blame the network for it because the
    user only sees a slow page or a slow call.

What to do
    Look at that application: profile where the time goes before it answers (database,
    upstream services, locks, a cold cache), or why the client waits before asking.

Thresholds
    A turn longer than two round trips plus 50 ms (a round trip each way and scheduling) counts as
    the application's; reported when those waits add up to 20 % of the connection's time.
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.rules import stop_and_wait

CODE = "application-delay"
FACTOR: Factor = "application"
MIN_SHARE = 0.2


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    taken = set(stop_and_wait.held_flows(ctx))
    flows = [f for f in ctx.flows_held_by(FACTOR, MIN_SHARE) if f not in taken]
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    mine = ctx.intervals(FACTOR, [worst])
    # Who broke each silence: the sender of the segment that ended the wait.
    senders = []
    for tr in conn.transfers:  # at most the two directions of the connection
        senders.append((tr.sender, tr.receiver, np.isin(mine.frame1, tr.frame)))
    longest = int(np.argmax(mine.duration))
    who, waiting = conn.server, conn.client
    for sender, receiver, hit in senders:
        if hit[longest]:
            who, waiting = sender, receiver
    rtt = conn.min_rtt_s
    total = ctx.wall_clock(FACTOR, flows)
    waits = int(mine.t0.size)
    summary = (
        f"In flow {worst}, {waiting} waited {w.duration(float(mine.duration[longest]))} for "
        f"{who} to send"
    )
    if rtt:
        summary += f" although a round trip takes {w.duration(rtt)}"
    summary += (
        f"; the network was idle meanwhile. Waits like this ({w.times(waits)}) add up to "
        f"{w.duration(ft.seconds[worst])} of the connection's "
        f"{w.duration(conn.duration_s)}: the time went to {who.rsplit(':', 1)[0]}'s "
        "application, not to TCP."
    )
    fix = (
        f"Look at the application on {who.rsplit(':', 1)[0]}: profile where it spends the "
        f"{w.duration(float(mine.duration[longest]))} before sending (a database query, an "
        "upstream call, a lock, a cold cache), or why it waits before asking."
    )
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"Application delay: {who} took {w.duration(float(mine.duration[longest]))} to send",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(
                ft.runs,
                [int(mine.frame0[longest]), int(mine.frame1[longest])],
                longest_wait_s=round(float(mine.duration[longest]), 6),
            ),
        )
    ]
