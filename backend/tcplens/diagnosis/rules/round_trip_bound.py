"""round-trip-bound: already efficient; the round trips themselves were the time.

What it detects
    Connections whose time went mostly to round trips that no setting removes: the handshake,
    a request waiting one round trip for its response. Reported only when no problem was found.

Why it matters
    Tells the user plainly that TCP and both ends did their job and the time is the distance.

What to do
    Fewer round trips (combine requests, reuse the connection, TLS 1.3 / 0-RTT where it
    applies) or a server closer to the client.
"""

from __future__ import annotations

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding

CODE = "round-trip-bound"
FACTOR: Factor = "latency"


def detect(ctx: Context) -> list[Finding]:
    lat = ctx.factor_time("latency")
    setup = ctx.factor_time("connection_setup")
    if not lat.flows:
        return []
    worst = lat.flows[0]
    conn = ctx.by_flow[worst]
    rtt = conn.min_rtt_s
    if not rtt:
        return []
    total = lat.total_s + sum(setup.seconds.get(f, 0.0) for f in lat.flows)
    duration = conn.duration_s
    exchanges = lat.intervals[worst]
    what = (
        f"the handshake and {exchanges} request/response exchanges"
        if exchanges > 1
        else "the handshake and waiting for the response"
    )
    spent = lat.seconds[worst] + setup.seconds.get(worst, 0.0)
    # The round trips themselves: one per exchange and the handshake's. A request/response
    # turn can take far longer than a round trip (the applications preparing the next request
    # or answer between them): that time is said as the turns', not as round trips.
    trips = (exchanges + 1) * rtt
    if spent > 2 * trips:
        summary = (
            f"Flow {worst} took {w.duration(duration)}, of which {w.duration(spent)} went to "
            f"{what}: {w.duration(trips)} of round trips of {w.duration(rtt)} and the rest "
            f"between them, about {w.duration((spent - trips) / max(exchanges, 1))} a turn, in "
            "which the applications prepared the next request or answer. No setting of TCP "
            "or the path held it back."
        )
    else:
        summary = (
            f"Flow {worst} took {w.duration(duration)}, of which {w.duration(spent)} went to "
            f"round trips of {w.duration(rtt)} ({what}), each answered promptly: the distance "
            "between the hosts, not a setting."
        )
    fix = (
        "Save round trips: reuse connections, combine requests (or pipeline them, HTTP/2), or "
        "move the server closer to its clients."
    )
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=lat.flows),
            title=f"Round-trip bound: {w.duration(rtt)} per round trip",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=lat.flows,
            evidence=evidence_of(lat.runs, None, rtt_ms=round(rtt * 1e3, 3)),
        )
    ]
