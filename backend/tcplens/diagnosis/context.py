"""What every rule receives: the connections, their labelled time and the DNS exchanges, plus
the small aggregations several rules share (time per flow for a factor, evidence ranges)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np

from tcplens.diagnosis.finding import (
    FACTOR_INDEX,
    FACTORS,
    SEVERITY_RANK,
    Evidence,
    Factor,
    Severity,
    severity_for_share,
)
from tcplens.diagnosis.timeline import Intervals, LabelledTime
from tcplens.diagnosis.transfer import F64, Connection, DnsExchange, FlowFacts, Transfer

T = TypeVar("T")
MAX_RANGES = 20  # evidence time ranges per finding: enough to jump to, few enough to read
MAX_FRAMES = 50
MIN_PROBLEM_S = 0.1  # time lost below which nothing is a high or medium problem


@dataclass(frozen=True)
class FactorTime:
    """Time one factor held, per flow, from the labelled intervals."""

    flows: tuple[int, ...]  # flows where it held any time, most time first
    seconds: dict[int, float]  # per flow
    intervals: dict[int, int]  # per flow, how many intervals
    total_s: float
    # its intervals in every flow, each run of touching intervals merged into one: what
    # ``evidence_of`` needs (``Context.intervals`` gives a flow's own intervals)
    runs: Intervals


@dataclass
class Context:
    facts: FlowFacts  # every flow
    by_flow: Mapping[int, Connection]  # the flows labelled period by period, by flow id
    labelled: LabelledTime  # their labelled time
    dns: list[DnsExchange]
    # a rule's detection step, computed once when first asked for (``once``), by rule code
    _steps: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._factor_times: dict[Factor, FactorTime] = {}
        # The runs grouped by factor (stable: each group in its original order), so that each
        # factor's runs are one slice of this order instead of a mask over all.
        runs = self.labelled.runs
        self._by_factor = np.argsort(runs.factor, kind="stable")
        self._factor_bounds = np.searchsorted(
            runs.factor[self._by_factor], np.arange(-1, len(FACTORS) + 1), side="left"
        )
        answered = [d for d in self.dns if d.answer_t is not None]
        starts = np.concatenate((self.facts.start_s, [d.query_t for d in answered]))
        ends = np.concatenate((self._active_end(), [d.answer_t or 0.0 for d in answered]))
        self.active_s = _union_length(starts, ends)

    def once(self, key: str, step: Callable[[], T]) -> T:
        """``step()``, computed once per context: a rule's detection step that other rules or
        the verdicts read (e.g. the flows no-connection-reuse accounts for), so no rule writes
        into the context and the order of ``RULES`` decides nothing."""
        if key not in self._steps:
            self._steps[key] = step()
        return cast(T, self._steps[key])

    def factor_time(self, factor: Factor) -> FactorTime:
        if factor not in self._factor_times:
            self._factor_times[factor] = self._factor_time(factor)
        return self._factor_times[factor]

    def flows_held_by(self, factor: Factor, min_share: float) -> list[int]:
        """Flows that ``factor`` held for at least ``min_share`` of their own duration, the most
        held first: a rule reports a factor only where it mattered to that flow."""
        ft = self.factor_time(factor)
        duration = self.facts.duration_s  # Flows.id is the 1-based row
        return [
            f for f in ft.flows if ft.seconds[f] >= min_share * max(float(duration[f - 1]), 1e-9)
        ]

    def wall_clock(self, factor: Factor, flows: Iterable[int]) -> float:
        """The time ``factor`` held these flows, as wall-clock time: the union of its intervals,
        so flows held at the same moment are not added up past the time that passed (a
        finding's ``time_lost_s`` never exceeds the capture's duration)."""
        runs = self.factor_time(factor).runs
        keep = np.isin(runs.flow, np.fromiter(flows, np.int64))
        return _union_length(runs.t0[keep], runs.t1[keep])

    def intervals(self, factor: Factor, flows: Iterable[int]) -> Intervals:
        """The intervals ``factor`` held in these flows (ascending), each flow's in order."""
        return self.labelled.intervals(factor, flows)

    def _factor_time(self, factor: Factor) -> FactorTime:
        i = FACTOR_INDEX[factor]
        lt = self.labelled
        runs = lt.runs.take(
            self._by_factor[self._factor_bounds[i + 1] : self._factor_bounds[i + 2]]
        )
        has = np.flatnonzero(lt.counts[:, i] > 0)  # group 0 of the runs is idle time (-1)
        if has.size == 0:
            return FactorTime((), {}, {}, 0.0, runs)
        ids, per, n = lt.flows[has], lt.seconds[has, i], lt.counts[has, i]
        order = np.argsort(-per, kind="stable")
        seconds = {int(ids[j]): float(per[j]) for j in order}
        intervals = {int(ids[j]): int(n[j]) for j in order}
        flows = tuple(int(ids[j]) for j in order)
        return FactorTime(flows, seconds, intervals, float(per.sum()), runs)

    def share(self, seconds: float, flows: tuple[int, ...] = (), extra_s: float = 0.0) -> float:
        """``seconds`` as a share of the time the given flows were active (plus ``extra_s`` spent
        before them, e.g. waiting for DNS), or of the whole capture's active time: a slow
        transfer next to a long idle session is judged on its own time."""
        active = self.active_s
        if flows:
            rows = np.asarray(flows, np.int64) - 1  # Flows.id is the 1-based row
            rows = rows[(rows >= 0) & (rows < len(self.facts))]
            if rows.size:
                ends = self._active_end()[rows]
                active = _union_length(self.facts.start_s[rows], ends) + extra_s
        return min(seconds / active, 1.0) if active > 0 else 0.0

    def _active_end(self) -> F64:
        """Where each flow's activity ends on the capture's clock: its start plus its duration,
        which leaves out the time the capture's clock steps moved (``Flows.duration_ns``); its
        last packet's time would count a splice's hours as activity."""
        end: F64 = self.facts.start_s + self.facts.duration_s
        return end

    def severity(
        self,
        factor: Factor,
        seconds: float,
        *,
        flows: tuple[int, ...] = (),
        extra_s: float = 0.0,
        cap: Severity = "high",
    ) -> Severity:
        """Severity from the share of the flows' active time (see ``share``), never above
        ``cap``; under ``MIN_PROBLEM_S`` in all it is at most ``low`` whatever its share: a
        short capture makes a few round trips a large share without anyone waiting for them."""
        sev = severity_for_share(self.share(seconds, flows, extra_s), factor)
        if seconds < MIN_PROBLEM_S and SEVERITY_RANK[sev] < SEVERITY_RANK["low"]:
            sev = "low"
        return sev if SEVERITY_RANK[sev] >= SEVERITY_RANK[cap] else cap

    def transfer(self, flow: int) -> Transfer | None:
        """The transfer of a flow that carried the most payload."""
        conn = self.by_flow.get(flow)
        if conn is None or not conn.transfers:
            return None
        return max(conn.transfers, key=lambda tr: tr.payload_bytes)


def _union_length(starts: F64, ends: F64) -> float:
    """Total length of the union of the intervals ``[starts[i], ends[i]]``."""
    if starts.size == 0:
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    covered_from = np.maximum(s, np.concatenate(([-np.inf], e[:-1])))
    return float(np.clip(e - covered_from, 0.0, None).sum())


def evidence_of(
    spans: Intervals, extra_frames: list[int] | None = None, **extra: object
) -> Evidence:
    """Merge touching intervals into time ranges (longest first, at most ``MAX_RANGES``) and
    collect the frames that start and end them."""
    if spans.t0.size == 0:
        return Evidence((), tuple(sorted(set(extra_frames or [])))[:MAX_FRAMES], dict(extra))
    order = np.lexsort((spans.t0, spans.flow))
    t0, t1 = spans.t0[order], spans.t1[order]
    f0, f1, fl = spans.frame0[order], spans.frame1[order], spans.flow[order]
    # A new range starts where the previous one (same flow) ended before this one began.
    reach = np.maximum.accumulate(t1)
    new = np.ones(t0.size, np.bool_)
    new[1:] = (t0[1:] > reach[:-1] + 1e-9) | (fl[1:] != fl[:-1])
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    r0 = t0[starts]
    r1 = np.maximum.reduceat(t1, starts)
    first = f0[starts]
    last = np.maximum.reduceat(f1, starts)
    del group
    keep = np.argsort(-(r1 - r0), kind="stable")[:MAX_RANGES]
    keep = keep[np.argsort(r0[keep], kind="stable")]
    frames = set(int(x) for x in first[keep]) | set(int(x) for x in last[keep])
    frames |= set(extra_frames or [])
    ranges = tuple((float(r0[i]), float(r1[i])) for i in keep)
    return Evidence(ranges, tuple(sorted(frames))[:MAX_FRAMES], dict(extra))
