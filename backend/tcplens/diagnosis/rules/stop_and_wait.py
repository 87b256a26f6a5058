"""stop-and-wait: the application waited for an answer before sending more.

What it detects
    Pauses in which everything the sender had sent was acknowledged and it sent nothing more
    until later — typically right after the peer's application answered (an application-level
    ack, the response to a request): in flight drops to zero every round trip, request/response
    ping-pong. Also the wait between a request and its response when the server takes much
    longer than a round trip to answer.

Why it matters
    Each turn costs at least one round trip however fast the path: sending 512 KB as 16 KB
    messages that each wait for an answer at 25 ms RTT takes 32 round trips of waiting. TCP
    and the network are idle in between, so no TCP tuning helps.

What to do
    Pipeline: send the next message (request) before the answer to the previous one arrives,
    batch messages, or make the acknowledgement window larger (several messages outstanding).
    For a slow server response, look at the server's processing time.

Thresholds
    A pause is longer than 10 % of the RTT; pauses longer than max(0.5 s, 4 RTT) are idle time
    (a user thinking, a keep-alive connection at rest) and not counted. Reported when these
    turns took at least 20 % of the connection's time: a normal single request/response pays
    one round trip and stays below that.
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding

CODE = "stop-and-wait"
FACTOR: Factor = "application"
MIN_SHARE = 0.2
MIN_TURNS = 3  # one long pause is a slow answer, not a protocol that waits after every message


def held_flows(ctx: Context) -> list[int]:
    """This rule's detection step: the flows whose application waits are a stop-and-wait
    protocol (at least ``MIN_SHARE`` of their time, ``MIN_TURNS`` turns in the worst), most held
    first; the application-delay rule reads it to leave those waits to this finding."""
    return ctx.once(CODE, lambda: _held_flows(ctx))


def _held_flows(ctx: Context) -> list[int]:
    flows = ctx.flows_held_by(FACTOR, MIN_SHARE)
    if not flows or ctx.transfer(flows[0]) is None:
        return []
    if ctx.intervals(FACTOR, [flows[0]]).t0.size < MIN_TURNS:
        return []
    return flows


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    flows = held_flows(ctx)
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    assert tr is not None  # (held_flows: its worst flow has a transfer)
    mine = ctx.intervals(FACTOR, [worst])
    turns = int(mine.t0.size)
    mean_turn = float(mine.duration.mean())
    answers = tr.ack_payload[tr.ack_payload > 0]
    per_turn = tr.payload_bytes / max(turns, 1)
    rtt = conn.min_rtt_s
    total = ctx.wall_clock(FACTOR, flows)
    summary = (
        f"Flow {worst} spent {w.duration(ft.seconds[worst])} of its "
        f"{w.duration(conn.duration_s)} in {turns} pauses of {w.duration(mean_turn)} on "
        f"average in which {tr.sender} had everything acknowledged and sent nothing"
    )
    if answers.size:
        summary += (
            f" until {tr.receiver}'s application answered ({answers.size} answers of "
            f"{w.size(float(np.median(answers)))}): a stop-and-wait exchange"
        )
    else:
        summary += ": its application had nothing more to send yet"
    summary += f". It sent about {w.size(per_turn)} between pauses."
    if rtt:
        summary += (
            f" Each turn costs at least one {w.duration(rtt)} round trip however fast the path."
        )
    fix = (
        "Pipeline the exchanges: send the next message or request before the answer to the "
        "previous one arrives (or allow several outstanding), batch small messages into larger "
        "ones, or run independent requests concurrently."
    )
    frames = [int(x) for x in np.concatenate((mine.frame0[:10], mine.frame1[:10]))]
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"Stop-and-wait: {turns} application turns took {w.duration(total)}",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(ft.runs, frames, turns=turns),
        )
    ]
