"""slow-start-bound: the transfer ended before TCP had grown its window.

What it detects
    Time in which the sender was held by its congestion window before any loss and with no
    queue building: slow start, doubling the window every round trip from the initial 10
    segments (RFC 6928). A transfer of a few hundred KB at a long RTT spends most of its life
    there.

Why it matters
    Each round trip of slow start delivers only what the window allowed so far: 100 KB at 120 ms
    takes 3-4 round trips however fast the path. It is only worth fixing when it repeats (then
    see ``no-connection-reuse``) or the RTT is long.

What to do
    Keep connections open and reuse them so the window stays grown; send fewer, larger
    transfers; for a server under your control, consider a larger initial window
    (``ip route ... initcwnd``).

Thresholds
    Reported (at most ``low``) when it holds 20 % of a connection's time and the connection is
    not part of a no-reuse group, whose finding already counts this time.
"""

from __future__ import annotations

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding

CODE = "slow-start-bound"
FACTOR: Factor = "slow_start"
MIN_SHARE = 0.2


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    flows = [f for f in ctx.flows_held_by(FACTOR, MIN_SHARE) if f not in ctx.claimed_by_setup]
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    rtt = conn.min_rtt_s
    if tr is None or not rtt:
        return []
    total = sum(ft.seconds[f] for f in flows)
    rounds = ft.seconds[worst] / rtt
    summary = (
        f"Flow {worst} moved {w.size(tr.payload_bytes)} and spent "
        f"{w.duration(ft.seconds[worst])} (about {rounds:.0f} round trips of {w.duration(rtt)}) "
        f"with {tr.sender} still growing its congestion window — no loss and no queue held it, "
        "the transfer was simply too short to reach the path's speed."
    )
    fix = (
        "Reuse a warm connection for the next transfer (keep-alive, a connection pool) so it "
        "starts with a grown window; send fewer, larger transfers; on a server you control, a "
        "larger initial congestion window (`ip route change ... initcwnd 20`) saves round trips."
    )
    sp = ft.runs.take(ft.runs.flow == worst)  # (runs: the same evidence as its intervals)
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(total, flows=tuple(flows), cap="low"),
            title=f"Transfer too short to leave slow start ({rounds:.0f} round trips)",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(sp, None, round_trips=round(rounds, 1)),
        )
    ]
