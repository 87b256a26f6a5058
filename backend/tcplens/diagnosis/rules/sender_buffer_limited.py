"""sender-buffer-limited: the sender did not have the data in its socket buffer.

What it detects
    Time in which the sender stopped sending although the receiver's window had room and ACKs
    were freeing space in its congestion window, while data was still in flight; or sent less
    than it had already had in flight earlier without any loss to shrink its congestion window.
    Bytes in flight plateau well below the receive window, with no retransmissions. This is what
    Linux counts as ``tcpi_sndbuf_limited``.

Why it matters
    A fixed ``SO_SNDBUF`` (8 KB is common in old code and some frameworks) holds at most that
    much unacknowledged data, so the transfer runs at about buffer / RTT however fast the path;
    many small ``write()`` calls from a slow producer look the same.

What to do
    Remove the fixed SO_SNDBUF so the kernel autotunes it (``net.ipv4.tcp_wmem``), or raise it
    to at least the bandwidth-delay product; write in larger batches.

Thresholds
    "ACKs freed at least two segments during a pause longer than 10 % of the RTT" and "in flight
    below 90 % of what it was earlier" are relative to the flow's own RTT and segment size. On
    sndbuf_small_upload (SO_SNDBUF 8 KB, 80 ms) 60 % of the time is labelled this way, on the
    autotuned bulk transfers under 4 %. A pause while the round trip stood above its minimum
    (by bandwidth-limited's 25 % / 2 ms) is not this: a queue at the bottleneck means more than
    the path's bandwidth-delay product was in flight, so nothing at the sender capped it (a
    200 Mbit/s, 3 ms transfer paused by the kernel's TCP small queues while 18 ms of queue stood).
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context, evidence_of
from tcplens.diagnosis.finding import Factor, Finding
from tcplens.diagnosis.measure import (
    delivered_bytes,
    flight_during,
    of_transfer,
    scale_note,
    windows_during,
)
from tcplens.diagnosis.rules import receiver_window_limited

CODE = "sender-buffer-limited"
FACTOR: Factor = "sender_buffer"
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
    if tr is None or rtt is None or rtt <= 0:
        return []
    mine = of_transfer(tr, ctx.intervals(FACTOR, [worst]))
    flight = flight_during(tr, mine)
    plateau = float(np.percentile(flight, 90)) if flight.size else 0.0
    windows = windows_during(tr, mine)
    windows = windows[windows > 0]  # (a zero window is the receiver's limit, not room)
    window = float(np.median(windows)) if windows.size else 0.0
    got = delivered_bytes(tr, mine) / max(float(mine.duration.sum()), 1e-9)
    total = ctx.wall_clock(FACTOR, flows)
    sender_host = tr.sender.rsplit(":", 1)[0]
    offered = (
        f"although {tr.receiver} offered a window of {w.size(window)}"
        if window > 0
        else f"although none of its segments reached the edge of {tr.receiver}'s window"
        if tr.window_scale < 0
        else f"although {tr.receiver}'s window had room"
    )
    summary = (
        f"For {w.duration(ft.seconds[worst])} of flow {worst}'s "
        f"{w.duration(conn.duration_s)}, {tr.sender} kept at most about "
        f"{w.size(plateau)} in flight {offered} and nothing was lost: it paused while ACKs freed "
        f"room, so the data was not in its socket buffer. At {w.a(w.duration(rtt))} round trip "
        f"that holds the transfer near {w.rate(plateau / rtt)}; it ran at {w.rate(got)} during "
        f"that time.{scale_note(tr)}"
    )
    # The rate to size the buffer for: the path's own when the capture measured it (another
    # flow between the same hosts held by the bottleneck), never an assumed one.
    measured = receiver_window_limited.path_capacity(ctx, tr)
    size_for = (
        f"at least {w.size(measured[0] * rtt)} (rate × RTT for the {w.rate(measured[0])} the path "
        f"delivered in flow {measured[1]})"
        if measured is not None and measured[0] * rtt > plateau
        else "the bandwidth-delay product of the rate it should reach (the capture does not "
        f"show the path's capacity): {w.windows_per_rate(rtt)}"
    )
    fix = (
        f"On {sender_host}, remove a fixed SO_SNDBUF so the kernel autotunes the send buffer "
        f"(net.ipv4.tcp_wmem), or raise it to {size_for}; write in larger batches instead of "
        "many small writes."
    )
    return [
        Finding(
            code=CODE,
            factor=FACTOR,
            severity=ctx.severity(FACTOR, total, flows=tuple(flows)),
            title=f"Sender's buffer too small: only {w.size(plateau)} in flight",
            summary=summary,
            fix=fix,
            time_lost_s=total,
            flows=tuple(flows),
            evidence=evidence_of(
                ft.runs,
                None,
                bytes_in_flight=int(plateau),
                receiver_window_bytes=int(window),
                rtt_ms=round(rtt * 1e3, 3),
                window_scale=tr.window_scale,
                window_scale_inferred=tr.window_scale_inferred,
            ),
        )
    ]
