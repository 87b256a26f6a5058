"""receiver-window-limited: the receiver's buffer was too small for the path.

What it detects
    Time in which the sender had sent everything the receiver's advertised window allowed (its
    highest byte within one segment of ack + window, as the sender knew it) while the window
    stood at the largest value this receiver ever offered: the buffer was full of data *in
    flight*, not of unread data. Throughput is then capped at window / RTT whatever the path can
    carry. Wireshark marks the same moments as ``tcp.analysis.window_full``.

Why it matters
    It is the classic "fast network, slow transfer": a fixed ``SO_RCVBUF`` (or nginx
    ``listen ... rcvbuf=``) switches off Linux's receive-buffer autotuning, and without window
    scaling (RFC 7323) the window cannot exceed 64 KB. At 30 ms RTT a 64 KB window caps a
    transfer at 17 Mbit/s on a gigabit path.

What to do
    Let the receiver's kernel autotune: remove the fixed receive buffer, make sure
    ``net.ipv4.tcp_rmem``'s maximum is at least the bandwidth-delay product (rate × RTT) and
    that window scaling is on. The rate to size it for is the path's own capacity when the
    capture measured it (the delivery rate of another flow between the same hosts, in the same
    direction, that the path itself held back); otherwise the window needed at 10 Mbit/s,
    100 Mbit/s and 1 Gbit/s (no rate is assumed).

Thresholds (why they hold across RTTs, sizes and capture points)
    The comparison is between sequence numbers, not rates, so it does not depend on RTT or size;
    the sender's view of the window is taken ``lag_s`` before each resume (~0 near the sender,
    one RTT near the receiver) with a jitter allowance of 20 % of that lag, which on the lab
    captures separates 89-98 % window-limited time (rcvbuf_locked_download at the receiver,
    rwnd_small_upload at the sender) from < 1 % on the autotuned transfers.
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.measure import delivered_bytes, of_transfer, scale_note, windows_during
from tcplens.diagnosis.rules import bandwidth_limited
from tcplens.diagnosis.transfer import Transfer

CODE = "receiver-window-limited"
FACTOR: Factor = "receiver_window"
MIN_SHARE = 0.05  # of the flow's own duration, below which a few window-full moments are noise
PATH_CANDIDATES = 20  # path-limited flows looked at for one between the same hosts


def path_capacity(ctx: Context, tr: Transfer) -> tuple[float, int] | None:
    """The rate (bytes/s) the path from ``tr``'s sender to its receiver delivered while it was
    the limit, and the flow that showed it: another flow between the same two hosts, in the
    same direction, that the path itself held (the bandwidth-limited rule's flows: a queue built
    at the bottleneck for at least its share of the flow), the one held longest. A window-
    limited flow's own brief queueing moments are not enough: a burst filling the queue for a
    few milliseconds measures the burst, not the link (rcvbuf_locked_download: 79 Mbit/s over
    such moments on a 60 Mbit/s path)."""
    hosts = (tr.sender.rsplit(":", 1)[0], tr.receiver.rsplit(":", 1)[0])
    held = ctx.flows_held_by("bandwidth", bandwidth_limited.MIN_SHARE)
    for flow in [f for f in held if f != tr.flow][:PATH_CANDIDATES]:
        other = ctx.transfer(flow)
        if other is None or (
            (other.sender.rsplit(":", 1)[0], other.receiver.rsplit(":", 1)[0]) != hosts
        ):
            continue
        spans = of_transfer(other, ctx.intervals("bandwidth", [flow]))
        if spans.t0.size:
            return delivered_bytes(other, spans) / max(float(spans.duration.sum()), 1e-9), flow
    return None


def detect(ctx: Context) -> list[Finding]:
    ft = ctx.factor_time(FACTOR)
    flows = ctx.flows_held_by(FACTOR, MIN_SHARE)
    if not flows:
        return []
    worst = flows[0]
    conn = ctx.by_flow[worst]
    tr = ctx.transfer(worst)
    rtt = conn.min_rtt_s
    if tr is None or rtt is None or rtt <= 0 or not (tr.window >= 0).any():
        return []
    mine = of_transfer(tr, ctx.intervals(FACTOR, [worst]))
    windows = windows_during(tr, mine)
    window = int(windows.max()) if windows.size else int(tr.window.max())
    cap = window / rtt
    got = delivered_bytes(tr, mine) / max(float(mine.duration.sum()), 1e-9)
    measured = path_capacity(ctx, tr)
    # The path's own capacity when the capture showed it (and the window held the transfer
    # below it); else no rate is assumed: the needed window per reference rate.
    path = measured if measured is not None and measured[0] > cap else None
    needed = path[0] * rtt if path is not None else None
    total = ctx.wall_clock(FACTOR, flows)
    receiver_host = tr.receiver.rsplit(":", 1)[0]
    no_scaling = tr.window_scale == 0 and not tr.window_scale_inferred
    why = (
        " The receiver announced no window scaling (shift 0) in its handshake, so no buffer"
        " could make it advertise more than 64 KB on this connection."
        if no_scaling
        else ""
    )
    summary = (
        f"For {w.duration(ft.seconds[worst])} of flow {worst}'s {w.duration(conn.duration_s)}, "
        f"{tr.sender} had sent everything {tr.receiver} allowed: the receiver's advertised window "
        f"never exceeded {w.size(window)}, and at {w.a(w.duration(rtt))} round trip that caps the "
        f"transfer at {w.rate(cap)} (window / RTT); it ran at {w.rate(got)} while limited. "
        + (
            f"The path itself delivered {w.rate(path[0])} when it was the limit (flow {path[1]}); "
            f"to run at that rate this transfer needs a window of about {w.size(needed)} "
            f"(the bandwidth-delay product).{why}"
            if path is not None and needed is not None
            else "The capture does not show the path's capacity; at this round trip the window "
            f"it needs is {w.windows_per_rate(rtt)} (the bandwidth-delay product).{why}"
        )
        + scale_note(tr)
    )
    if len(flows) > 1:
        summary += f" {len(flows)} flows were limited this way, {w.duration(total)} in all."
    fix = (
        f"Let {receiver_host}'s kernel size the receive buffer: remove the fixed SO_RCVBUF "
        "(or nginx `listen ... rcvbuf=`) so autotuning can grow the window, and make sure "
        "net.ipv4.tcp_rmem's maximum is at least "
        + (
            f"{w.size(needed)}"
            if needed is not None
            else f"the bandwidth-delay product of the rate it should reach ({w.windows_per_rate(rtt)})"
        )
        + (" and net.ipv4.tcp_window_scaling is 1." if no_scaling else ".")
    )
    windows_full = [int(x) for x in mine.frame0[:10]]
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"Receiver window too small: {w.size(window)} caps the transfer at {w.rate(cap)}",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(
                ft.runs,
                windows_full,
                advertised_window_bytes=window,
                rtt_ms=round(rtt * 1e3, 3),
                cap_bps=round(cap * 8),
                **(
                    {}
                    if path is None or needed is None
                    else {
                        "needed_window_bytes": int(np.ceil(needed)),
                        "path_rate_bps": round(path[0] * 8),
                        "path_flow": path[1],
                    }
                ),
                window_scale=tr.window_scale,
                window_scale_inferred=tr.window_scale_inferred,
            ),
        )
    ]
