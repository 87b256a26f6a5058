"""Run the labelling and the rules over one capture's TCP analysis."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tcplens.capture.table import Capture
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import FACTORS, Factor, Finding, importance_order
from tcplens.diagnosis.from_analysis import (
    KernelColumns,
    LabelledConnections,
    dns_exchanges,
    flow_facts,
    labelled_rows,
    labelled_time,
)
from tcplens.diagnosis.prediction import predict
from tcplens.diagnosis.rules import RULES, no_connection_reuse, round_trip_bound
from tcplens.diagnosis.timeline import shares_by_connection
from tcplens.tcp.model import VANTAGE_NAMES, TcpAnalysis


@dataclass(frozen=True)
class FlowVerdict:
    """What held one flow back: the factor with the most time, and every factor's share."""

    limiting_factor: Factor | None
    factor_shares: dict[Factor, float]


@dataclass(frozen=True)
class Diagnosis:
    findings: tuple[Finding, ...]  # most important first
    flows: dict[int, FlowVerdict]  # by flow id (1-based)

    def findings_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.findings]


def diagnose(capture: Capture, analysis: TcpAnalysis) -> Diagnosis:
    """Findings and per-flow verdicts for one capture (DESIGN.md ``findings``, ``limiting_factor``
    and ``factor_shares``)."""
    # The same origin as the report's ``start_s`` numbers, so evidence ranges line up with them.
    origin = capture.info.first_ts_ns
    if origin is None:
        origin = analysis.capture_start_ns
    facts = flow_facts(analysis, origin)
    rows = labelled_rows(facts)
    cols = KernelColumns(analysis)
    labelled = labelled_time(cols, origin, rows)
    conns = LabelledConnections(analysis, cols, origin, facts, rows)
    ctx = Context(facts, conns, labelled, dns_exchanges(capture, origin))
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule.detect(ctx))
    claimed = no_connection_reuse.claimed_flows(ctx)
    # Flows not labelled (no payload, or beyond the labelling bound) have no verdict.
    verdicts = dict.fromkeys(facts.id.tolist(), FlowVerdict(None, {}))
    durations = facts.duration_s[rows]
    verdicts.update(
        (flow, _verdict(shares, flow in claimed))
        for flow, shares in zip(
            facts.id[rows].tolist(), shares_by_connection(durations, labelled.seconds), strict=True
        )
    )
    # A factor that cost no measurable time (under a millisecond) is not worth a line.
    findings = [f for f in findings if f.time_lost_s is None or f.time_lost_s >= 0.001]
    # "Already efficient" is only worth saying when nothing worse was found.
    if any(f.severity in ("high", "medium") for f in findings):
        findings = [f for f in findings if f.code != round_trip_bound.CODE]
    findings = [_per_flow(f, ctx, _confidence(f, ctx, capture, analysis)) for f in findings]
    findings = predict(ctx, findings)  # what each fix buys
    return Diagnosis(tuple(_consistent(importance_order(findings))), verdicts)


# Fixes that cannot both be right for one flow: its receiver either kept its buffer full of
# unread data (read faster; a larger buffer only postpones the stall) or had a buffer too small
# for the path (raise it). The first in the order keeps the flows they share.
CONTRADICTING = {
    frozenset({"receiver-window-limited", "receiver-app-slow"}),
}


def _confidence(
    f: Finding, ctx: Context, capture: Capture, analysis: TcpAnalysis
) -> dict[str, Any]:
    """What the capture could not see, for the flows a finding names (its confidence inputs):
    where the capture point sat (``tcp/vantage.py``), whether every handshake was captured
    (without it the window scale and the handshake RTT are not in the capture), the values
    inferred instead of read, segments the capture missed (Wireshark's ``lost_segment``: a gap
    in the sequence numbers), timestamps that went backwards inside a flow, a capture cut
    short, the packets its snaplen cut (``snaplen``: the bytes kept of each, None when none was
    cut; their sizes come from the headers, their payload is not in the file) and the clock
    steps inside the flows (``capture.clock``: no time across one is counted)."""
    rows = np.asarray([fl - 1 for fl in f.flows if 0 < fl <= len(analysis.flows)], np.int64)
    vantage = sorted({VANTAGE_NAMES[v] for v in analysis.flows.vantage[rows].tolist()})
    first = f.flows[0] if f.flows else None
    inferred = (
        ["window_scale"]
        if first is not None
        and first in ctx.by_flow
        and any(tr.window_scale_inferred for tr in ctx.by_flow[first].transfers)
        else []
    )
    flows = analysis.flows
    snaplen = int(flows.snaplen[rows].max()) if rows.size else 0
    return {
        "capture_point": vantage[0] if len(vantage) == 1 else vantage,
        "handshake_captured": bool(rows.size) and bool((analysis.flows.syn_ns[rows] >= 0).all()),
        "inferred": inferred,
        "packets_missing": int(flows.packets_missing[rows].sum()),
        "timestamps_backwards": int(flows.timestamps_backwards[rows].sum()),
        "capture_truncated": capture.info.truncated,
        "snaplen": snaplen or None,
        "packets_cut": int(flows.packets_cut[rows].sum()),
        "clock_jumps": int(flows.clock_steps[rows].sum()),
    }


def _per_flow(f: Finding, ctx: Context, confidence: dict[str, Any]) -> Finding:
    """Time lost as wall-clock time (never above the time the capture's flows and DNS lookups
    were active) and per flow in ``evidence.flow_time_lost_s``: the factor's labelled seconds
    of each flow, the ones its ``factor_shares`` show (so the flow table, the overview and the
    API say the same number); a cross-flow finding's time (DNS, setup) shared among its flows."""
    lost = f.time_lost_s
    if lost is not None:
        lost = min(lost, ctx.active_s)
    labelled = ctx.factor_time(f.factor).seconds
    share = (lost or 0.0) / max(len(f.flows), 1)
    per_flow = {
        str(flow): round(min(labelled.get(flow, share), lost or 0.0), 6) for flow in f.flows
    }
    extra = {**f.evidence.extra, "flow_time_lost_s": per_flow, "confidence": confidence}
    evidence = replace(f.evidence, extra=extra)
    return replace(f, time_lost_s=lost, evidence=evidence)


def _consistent(findings: list[Finding]) -> list[Finding]:
    """Drop a finding whose fix contradicts one ranked before it on the same flows."""
    kept: list[Finding] = []
    for f in findings:
        clash = any(
            frozenset({f.code, k.code}) in CONTRADICTING and set(f.flows) <= set(k.flows)
            for k in kept
        )
        if not clash:
            kept.append(f)
    return kept


def _verdict(shares: dict[Factor, float], setup_claimed: bool) -> FlowVerdict:
    """The flow's limiting factor is the one with the most time. A connection that a no-reuse
    finding explains counts its slow start as connection setup: reuse would have removed both."""
    if setup_claimed and "slow_start" in shares:
        moved = shares.pop("slow_start")
        shares["connection_setup"] = shares.get("connection_setup", 0.0) + moved
    if not shares:
        return FlowVerdict(None, shares)
    ranked = sorted(shares.items(), key=lambda kv: (-kv[1], FACTORS.index(kv[0])))
    return FlowVerdict(ranked[0][0], shares)
