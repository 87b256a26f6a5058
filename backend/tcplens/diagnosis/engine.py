"""Run the labelling and the rules over one capture's TCP analysis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcplens.capture.table import Capture
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import FACTORS, Factor, Finding, importance_order
from tcplens.diagnosis.from_analysis import (
    KernelColumns,
    LabelledConnections,
    dns_exchanges,
    flow_facts,
    label_flows,
    labelled_rows,
)
from tcplens.diagnosis.rules import RULES, round_trip_bound
from tcplens.diagnosis.timeline import shares_by_connection
from tcplens.tcp.model import TcpAnalysis


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
    labelled = label_flows(cols, origin, rows)
    conns = LabelledConnections(analysis, cols, origin, facts, rows)
    ctx = Context(facts, conns, labelled, dns_exchanges(capture, origin))
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule.detect(ctx))
    # Flows not labelled (no payload, or beyond the labelling bound) have no verdict.
    verdicts = dict.fromkeys(facts.id.tolist(), FlowVerdict(None, {}))
    durations = facts.end_s[rows] - facts.start_s[rows]
    verdicts.update(
        (flow, _verdict(shares, flow in ctx.claimed_by_setup))
        for flow, shares in zip(
            facts.id[rows].tolist(), shares_by_connection(durations, labelled.seconds), strict=True
        )
    )
    # A factor that cost no measurable time (under a millisecond) is not worth a line.
    findings = [f for f in findings if f.time_lost_s is None or f.time_lost_s >= 0.001]
    # "Already efficient" is only worth saying when nothing worse was found.
    if any(f.severity in ("high", "medium") for f in findings):
        findings = [f for f in findings if f.code != round_trip_bound.CODE]
    return Diagnosis(tuple(importance_order(findings)), verdicts)


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
