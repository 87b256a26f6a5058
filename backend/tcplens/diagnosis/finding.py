"""What a diagnosis says: factors, severities and findings, as in DESIGN.md's ``findings`` objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tcplens.diagnosis.factors import BY_FACTOR, FACTOR_INDEX, FACTORS, Factor

# (the factors are the registry's: ``factors.py``; re-exported here where findings are made)
__all__ = ["FACTORS", "FACTOR_INDEX", "Evidence", "Factor", "Finding", "Severity"]

Severity = Literal["high", "medium", "low", "info"]
SEVERITY_RANK: dict[Severity, int] = {"high": 0, "medium": 1, "low": 2, "info": 3}

# A factor that held back at least this share of the time the transfers were active is a problem
# worth fixing first (high); the lower bounds give medium and low. Shares, not seconds, so that a
# 40 ms RTT lab transfer and a 200 ms intercontinental one are judged alike.
HIGH_SHARE = 0.5
MEDIUM_SHARE = 0.2
LOW_SHARE = 0.05


def severity_for_share(share: float, factor: Factor) -> Severity:
    """Severity of ``factor`` when it held ``share`` of the active time (its registry entry's
    policy, ``factors.py``).

    Factors nobody can tune on the hosts (the path's bandwidth, the round trips themselves) are
    reported as ``info`` whatever their share: saying "the path was the limit" is the answer, not a
    problem to fix.
    """
    if not BY_FACTOR[factor].tunable:
        return "info"
    if share >= HIGH_SHARE:
        return "high"
    if share >= MEDIUM_SHARE:
        return "medium"
    if share >= LOW_SHARE:
        return "low"
    return "info"


@dataclass(frozen=True)
class Evidence:
    """Where to look: time ranges (capture-relative seconds) and 1-based frame numbers."""

    time_ranges_s: tuple[tuple[float, float], ...] = ()
    frames: tuple[int, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "time_ranges_s": [[round(a, 6), round(b, 6)] for a, b in self.time_ranges_s],
            "frames": list(self.frames),
        }
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class IfFixed:
    """What the fix buys: the transfer's duration and rate with it applied, and how that was
    reckoned (``prediction.py``)."""

    duration_s: float
    rate_bps: float
    basis: str

    def to_json(self) -> dict[str, Any]:
        return {
            "duration_s": round(self.duration_s, 6),
            "rate_bps": round(self.rate_bps, 1),
            "basis": self.basis,
        }


@dataclass(frozen=True)
class Finding:
    """One thing the diagnosis says, with the numbers that prove it and what to change."""

    code: str  # stable rule code, e.g. "receiver-window-limited"
    factor: Factor
    severity: Severity
    title: str
    summary: str
    fix: str
    # Time the factor held the transfers back (the labelled time, or for cross-flow factors the
    # time the fix would save: DNS waits, handshakes and slow starts of connections not reused).
    # For bandwidth and latency it is the time the path and the round trips bounded them.
    time_lost_s: float | None
    flows: tuple[int, ...]
    evidence: Evidence
    if_fixed: IfFixed | None = None  # set by ``prediction.predict`` after the rules

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "factor": self.factor,
            "severity": self.severity,
            "title": self.title,
            "summary": self.summary,
            "fix": self.fix,
            "time_lost_s": None if self.time_lost_s is None else round(self.time_lost_s, 6),
            "flows": list(self.flows),
            "evidence": self.evidence.to_json(),
            "if_fixed": None if self.if_fixed is None else self.if_fixed.to_json(),
        }


def importance_order(findings: list[Finding]) -> list[Finding]:
    """Most important first: by severity, then time lost, then code (stable for equal findings).
    The one ordering rule of every list of findings (the API, the overview, the CLI): a LOW
    finding never ranks above a MEDIUM one whatever their times."""
    return sorted(
        findings,
        key=lambda f: (SEVERITY_RANK[f.severity], -(f.time_lost_s or 0.0), f.code, f.flows),
    )
