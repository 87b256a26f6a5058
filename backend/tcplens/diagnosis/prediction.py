"""What a fix buys: each finding with a concrete fix gets ``if_fixed``, the transfer's duration and
rate predicted with that fix applied (DESIGN.md ``findings[].if_fixed``).

The model is the same transfer on the same path: the same bytes, the round trip the capture
measured (the smallest, as a fixed connection would see an empty queue), the path's capacity
(measured when the capture shows it, else an assumption the basis names) and its loss, and TCP's
slow start (RFC 5681 §3.1: the congestion window doubles each round trip) from the sender's
initial window (RFC 6928: 10 segments; the first flight of the capture when it shows one). What
the fix changes:

- ``receiver-window-limited``, ``receiver-app-slow``, ``sender-buffer-limited``: the window or
  buffer no longer caps the sender; the transfer runs slow start up to the path's capacity.
- ``no-connection-reuse``: the requests on one warm connection: one handshake, and each later
  request starts with the congestion window the earlier ones grew (Linux keeps it across short
  idle times; ``tcp_slow_start_after_idle`` only resets it after an RTO of silence, RFC 7661).
- ``stop-and-wait``: the messages pipelined on the connection: one stream of all the bytes.
- ``dns-delay``, ``nagle-delayed-ack``: the waits gone, the rest of the transfer as measured.

A finding concerns its ``flows``; the transfer is their span, from the first SYN (or the first
DNS query the finding counted) to the last payload. Flows a fix does not change keep their
measured time, and idle time between the flows (the application's own) stays:
``predicted = span - sum(measured - modelled)`` over the flows the fix changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import Finding, IfFixed
from tcplens.diagnosis.measure import delivered_bytes, of_transfer
from tcplens.diagnosis.rules import bandwidth_limited, receiver_window_limited
from tcplens.diagnosis.transfer import F64, Transfer

INITIAL_WINDOW_SEGMENTS = 10  # RFC 6928
DEFAULT_MSS = 1448  # an Ethernet path's MSS with TCP timestamps (1500 - 20 - 20 - 12)
# Mathis et al. 1997: a Reno-style sender loses at most one window per loss event, so its rate
# is bounded by MSS / RTT * sqrt(3/2) / sqrt(p) for a loss rate p (cubic does somewhat better:
# the bound keeps the prediction on the safe side).
MATHIS_C = math.sqrt(1.5)

WINDOW_CODES = ("receiver-window-limited", "receiver-app-slow", "sender-buffer-limited")
REUSE_CODE = "no-connection-reuse"
PIPELINE_CODE = "stop-and-wait"
WAIT_CODES = ("dns-delay", "nagle-delayed-ack")


@dataclass(frozen=True)
class PathModel:
    """What the model knows of the path and the sender."""

    rtt_s: float
    rate_Bps: float  # the path's capacity, bytes/s
    measured: bool  # the capacity was measured in this capture (else assumed)
    loss: float  # share of the sender's segments retransmitted
    mss: int
    initial_window: int  # bytes
    window_seen: bool  # the initial window is the capture's first flight (else RFC 6928's)

    @property
    def usable_Bps(self) -> float:
        """The capacity, or less where loss bounds a congestion-controlled sender (Mathis)."""
        if self.loss <= 0:
            return self.rate_Bps
        return min(self.rate_Bps, self.mss / self.rtt_s * MATHIS_C / math.sqrt(self.loss))

    def words(self) -> str:
        rate = w.rate(self.usable_Bps)
        if self.loss > 0 and self.usable_Bps < self.rate_Bps:
            rate += f" (what {w.share(self.loss)} loss leaves of {w.rate(self.rate_Bps)})"
        where = (
            "measured in this capture"
            if self.measured
            else "assumed: the capture does not show the path's capacity"
        )
        return f"at {w.a(w.duration(self.rtt_s))} RTT and ~{rate} ({where})"


def exchange_time(nbytes: F64, cwnd: F64, path: PathModel) -> tuple[F64, F64]:
    """Time of request/response exchanges of ``nbytes`` each, each starting with a congestion
    window of ``cwnd`` bytes, from the request leaving the client to the last byte of the answer
    back (excluding the handshake), and the round trips of slow start each took.

    Round k sends ``cwnd * 2**k`` bytes (RFC 5681 slow start) until a round holds the path's
    bandwidth-delay product; from then on the rest flows at the path's rate. Each round costs a
    round trip; the last round its bytes' time on the wire; plus the round trip of the request
    and the answer."""
    rtt, rate = path.rtt_s, path.usable_Bps
    bdp = max(rate * rtt, 1.0)
    cwnd = np.maximum(cwnd, float(path.mss))
    # rounds until the window holds the BDP, and what they send
    grow = np.maximum(np.ceil(np.log2(np.maximum(bdp / cwnd, 1.0))), 0.0)
    sent_growing = cwnd * (2.0**grow - 1.0)
    # within slow start: n rounds, the last one partly filled
    n = np.maximum(np.ceil(np.log2(nbytes / cwnd + 1.0)), 1.0)
    last = nbytes - cwnd * (2.0 ** (n - 1.0) - 1.0)
    in_slow_start = n * rtt + last / rate
    streaming = (grow + 1.0) * rtt + (nbytes - sent_growing) / rate
    done_growing = nbytes > sent_growing
    time: F64 = np.where(done_growing, streaming, in_slow_start)
    rounds: F64 = np.where(done_growing, grow, n)
    return time, rounds


def window_after(total_bytes: F64, path: PathModel) -> F64:
    """The congestion window after ``total_bytes`` were acknowledged in slow start: the initial
    window plus every byte acknowledged (RFC 5681 §3.1 with RFC 3465's byte counting: each ACK
    grows it by what it acknowledged), capped at the path's bandwidth-delay product. What a
    warm connection starts its next request with."""
    bdp = max(path.usable_Bps * path.rtt_s, float(path.initial_window))
    grown: F64 = np.minimum(path.initial_window + np.maximum(total_bytes, 0.0), bdp)
    return grown


def predict(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """The findings, each with ``if_fixed`` where its fix is concrete and the capture has what
    the model needs (a round trip, payload)."""
    return [replace(f, if_fixed=if_fixed(ctx, f)) for f in findings]


def if_fixed(ctx: Context, finding: Finding) -> IfFixed | None:
    if finding.code in WAIT_CODES:
        return _waits_gone(ctx, finding)
    if finding.code not in (*WINDOW_CODES, REUSE_CODE, PIPELINE_CODE):
        return None
    rows = _rows(ctx, finding.flows)
    if rows.size == 0:
        return None
    path = path_model(ctx, [int(x) for x in ctx.facts.id[rows].tolist()])
    if path is None:
        return None
    fx = ctx.facts
    payload = fx.payload[rows].astype(np.float64)
    measured_each = fx.last_data_s[rows] - _opened(ctx, rows)
    handshake = path.rtt_s if not np.isnan(fx.syn_s[rows]).all() else 0.0
    span = _span(ctx, finding)
    total = float(payload.sum())
    if finding.code == REUSE_CODE:
        # one warm connection: one handshake, each request with the window the earlier grew
        before = np.concatenate(([0.0], np.cumsum(payload)[:-1]))
        cwnd = window_after(before, path)
        cwnd[0] = path.initial_window
        times, _ = exchange_time(payload, cwnd, path)
        modelled = handshake + float(times.sum())
        saved = float(np.nansum(measured_each)) - modelled
        how = (
            f"the {rows.size} requests ({w.size(total)}) on one warm connection need one "
            f"handshake and {rows.size} request round trips, the later ones starting with "
            "the window the earlier ones grew"
        )
    else:
        iw = np.full(rows.size, float(path.initial_window))
        if finding.code == PIPELINE_CODE:
            times, rounds = exchange_time(payload, iw, path)
            what = "pipelined, the messages"
        else:
            times, rounds = exchange_time(payload, iw, path)
            what = "with the window no longer capping it, the transfer"
        modelled_each = np.where(np.isnan(fx.syn_s[rows]), 0.0, handshake) + times
        saved = float(np.nansum(measured_each - modelled_each))
        modelled = float(modelled_each.max())
        how = (
            f"{what} ({w.size(total)}) needs about {int(rounds.max())} round trips of slow "
            f"start from an initial window of {path.initial_window // path.mss} segments"
            + (" (its first flight here)" if path.window_seen else " (RFC 6928)")
        )
    if not (math.isfinite(span) and span > 0 and math.isfinite(saved)):
        return None  # a transfer without a measurable span (its payload in one instant)
    duration = max(span - max(saved, 0.0), modelled, 1e-6)
    if saved <= 0:
        basis = (
            f"{path.words()}, {how}: no faster than the {w.duration(span)} it took; "
            "something else held it"
        )
        duration = span
    else:
        basis = f"{path.words()}, {how}: ≈ {w.duration(duration)} instead of {w.duration(span)}"
    return IfFixed(duration, total * 8.0 / duration, basis)


def _waits_gone(ctx: Context, finding: Finding) -> IfFixed | None:
    """DNS waits and delayed-ACK stalls removed: the rest of the transfer as measured."""
    rows = _rows(ctx, finding.flows)
    lost = finding.time_lost_s
    if rows.size == 0 or not lost:
        return None
    span = _span(ctx, finding)
    if not (math.isfinite(span) and span > 0):
        return None
    duration = max(span - lost, 1e-6)
    total = float(ctx.facts.payload[rows].sum())
    wait = "DNS wait" if finding.code == "dns-delay" else "delayed-ACK stalls"
    basis = (
        f"without the {w.duration(lost)} of {wait}, the transfer ({w.size(total)}) takes the "
        f"rest of its measured time: ≈ {w.duration(duration)} instead of {w.duration(span)}"
    )
    return IfFixed(duration, total * 8.0 / duration, basis)


def _rows(ctx: Context, flows: tuple[int, ...]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Rows of the flows (Flows.id is the 1-based row) that carried payload."""
    rows = np.asarray(flows, np.int64) - 1
    rows = rows[(rows >= 0) & (rows < len(ctx.facts))]
    return rows[(ctx.facts.payload[rows] > 0) & ~np.isnan(ctx.facts.last_data_s[rows])]


def _opened(ctx: Context, rows: np.ndarray[Any, np.dtype[np.int64]]) -> F64:
    """When each flow began: its SYN, else its first packet."""
    fx = ctx.facts
    opened: F64 = np.where(np.isnan(fx.syn_s[rows]), fx.start_s[rows], fx.syn_s[rows])
    return opened


def _span(ctx: Context, finding: Finding) -> float:
    """The transfer the finding concerns: its first flow's opening (or the first DNS query it
    counted) to its flows' last payload."""
    rows = _rows(ctx, finding.flows)
    start = float(_opened(ctx, rows).min())
    if finding.code == "dns-delay" and finding.evidence.time_ranges_s:
        start = min(start, min(a for a, _ in finding.evidence.time_ranges_s))
    return float(ctx.facts.last_data_s[rows].max()) - start


def path_model(ctx: Context, flows: list[int]) -> PathModel | None:
    """Round trip, capacity, loss and initial window of the path the flows took, from the
    first of them the labelling looked at (the others took the same path)."""
    labelled = [f for f in flows if f in ctx.by_flow]
    conns = [ctx.by_flow[f] for f in labelled[:20]]
    rtts = [c.min_rtt_s for c in conns if c.min_rtt_s]
    if not rtts:
        hs = ctx.facts.handshake_rtt_s[np.asarray(flows, np.int64) - 1]
        hs = hs[~np.isnan(hs) & (hs > 0)]
        if hs.size == 0:
            return None
        rtts = [float(hs.min())]
    rtt = min(rtts)
    trs = [tr for f in labelled[:20] if (tr := ctx.transfer(f)) is not None]
    if not trs:
        return None
    tr = trs[0]
    mss = tr.mss if tr.mss > 0 else DEFAULT_MSS
    segments = sum(int(t.retransmission.size) for t in trs)
    loss = sum(int(t.retransmission.sum()) for t in trs) / segments if segments else 0.0
    iw, seen = _initial_window(tr, rtt, mss)
    measured = _measured_capacity(ctx, tr)
    if measured is not None:
        rate, is_measured = measured, True
    else:
        peak = max(_peak_rate(t, rtt) for t in trs)
        rate, is_measured = max(assumed_capacity(peak), peak), False
    return PathModel(rtt, rate, is_measured, loss, mss, iw, seen)


def assumed_capacity(peak_Bps: float) -> float:
    """The capacity assumed when the capture does not show it (bytes/s): a round reference, 100
    Mbit/s (a common access or data-centre path), or 1 Gbit/s once the capture itself carried
    more than half of that. The basis says it is an assumption."""
    return 125e6 if peak_Bps * 8 > 50e6 else 12.5e6


def _initial_window(tr: Transfer, rtt: float, mss: int) -> tuple[int, bool]:
    """The sender's first flight (segments sent within half a round trip of its first data, as
    the sender saw it) when the receiver's window did not cap it and more data followed; else
    RFC 6928's 10 segments."""
    default = INITIAL_WINDOW_SEGMENTS * mss
    if tr.t.size == 0:
        return default, False
    first = tr.t <= tr.t[0] + 0.5 * rtt
    flight = int(tr.seq_end[first].max() - tr.seq[0])
    followed = bool((~first).any())
    window = int(tr.window[0]) if tr.window.size else -1
    capped = window >= 0 and flight >= window - mss
    if not followed or capped or flight < 2 * mss:
        return default, False
    return flight, True


def _measured_capacity(ctx: Context, tr: Transfer) -> float | None:
    """The rate (bytes/s) the path delivered while it was the limit: another flow between the
    same hosts that the path held (receiver-window rule's measurement), or this flow's own
    time held by the path."""
    other = receiver_window_limited.path_capacity(ctx, tr)
    if other is not None:
        return other[0]
    if tr.flow not in ctx.flows_held_by("bandwidth", bandwidth_limited.MIN_SHARE):
        return None
    spans = of_transfer(tr, ctx.intervals("bandwidth", [tr.flow]))
    if spans.t0.size == 0:
        return None
    return delivered_bytes(tr, spans) / max(float(spans.duration.sum()), 1e-9)


def _peak_rate(tr: Transfer, rtt: float) -> float:
    """The most the receiver acknowledged in any round trip, per second: the path carried at
    least that much."""
    if tr.ack_t.size < 2:
        return 0.0
    acked = np.maximum.accumulate(tr.ack)
    later = np.searchsorted(tr.ack_t, tr.ack_t + rtt)
    later = np.minimum(later, tr.ack_t.size - 1)
    span = np.maximum(tr.ack_t[later] - tr.ack_t, rtt)
    return float(((acked[later] - acked) / span).max())
