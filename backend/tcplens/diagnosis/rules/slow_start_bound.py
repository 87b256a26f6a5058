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
    Reported (at most ``low``) when it holds 20 % of a connection's time, the connection is
    not part of a no-reuse group, whose finding already counts this time, and the path did not
    hold it longer afterwards (then it did leave slow start).
"""

from __future__ import annotations

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.rules import no_connection_reuse

CODE = "slow-start-bound"
FACTOR: Factor = "slow_start"
MIN_SHARE = 0.2
# Slow start grows the window by half (one segment per delayed ACK, RFC 5681 §3.1 with RFC 3465)
# to double each round trip from 10 segments (RFC 6928): after 30 rounds that is above 1.9 M
# segments (2.7 GB), more than any path holds. Longer "slow start" is time the labelling could
# not explain otherwise, not a window still growing: no finding says it is.
MAX_ROUNDS = 30


def _growing(ctx: Context, flow: int, seconds: float) -> bool:
    """Whether ``seconds`` of slow start fit the round trips a window can grow for."""
    rtt = ctx.by_flow[flow].min_rtt_s if flow in ctx.by_flow else None
    return rtt is not None and seconds / rtt <= MAX_ROUNDS


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    claimed = no_connection_reuse.claimed_flows(ctx)
    # A flow that went on to fill the path (longer held by the bottleneck than by its slow
    # start) did leave slow start: its start is how every TCP transfer begins (RFC 5681 §3.1),
    # and the path, not the start, was its limit (the bandwidth finding says so).
    path = ctx.factor_time("bandwidth").seconds
    flows = [
        f
        for f in ctx.flows_held_by(FACTOR, MIN_SHARE)
        if f not in claimed and path.get(f, 0.0) < ft.seconds[f] and _growing(ctx, f, ft.seconds[f])
    ]
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    rtt = conn.min_rtt_s
    if tr is None or not rtt:
        return []
    total = ctx.wall_clock(FACTOR, flows)
    # (labelled slow-start time excludes idle gaps and application turns: timeline.py)
    rounds = ft.seconds[worst] / rtt
    summary = (
        f"Flow {worst} moved {w.size(tr.payload_bytes)} and spent "
        f"{w.duration(ft.seconds[worst])} (about {rounds:.0f} round trips of {w.duration(rtt)}) "
        f"with {tr.sender} still growing its congestion window — no loss and no queue held it, "
        "the transfer was simply too short to reach the path's speed."
    )
    # A connection that already carried several exchanges is a reused one: after an idle
    # period Linux restarts its window from the initial one (RFC 7661 / 5681 §4.1,
    # net.ipv4.tcp_slow_start_after_idle), which reusing it again does not change.
    pooled = ctx.factor_time("latency").intervals.get(worst, 0) > 0
    fix = (
        f"This connection is already reused: on {tr.sender.rsplit(':', 1)[0]}, turn off the "
        "restart from the initial window after idle (`sysctl net.ipv4.tcp_slow_start_after_idle=0`) "
        "so the grown window survives the pauses between transfers; send fewer, larger transfers; "
        "on a server you control, a larger initial congestion window (`ip route change ... "
        "initcwnd 20`) saves round trips."
        if pooled
        else "Reuse a warm connection for the next transfer (keep-alive, a connection pool) so it "
        "starts with a grown window; send fewer, larger transfers; on a server you control, a "
        "larger initial congestion window (`ip route change ... initcwnd 20`) saves round trips."
    )
    sp = ft.runs.take(ft.runs.flow == worst)  # (runs: the same evidence as its intervals)
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows), cap="low"),
            title=f"Transfer too short to leave slow start ({rounds:.0f} round trips)",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(sp, None, round_trips=round(rounds, 1)),
        )
    ]
