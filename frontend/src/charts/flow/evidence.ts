// A finding's evidence as ranges on the flow's time axis, labelled with the numbers of the marks
// the range holds ("window full ×420", "zero window 1.20 s", "idle 200 ms × 8").

import { formatBitRate, formatBytes, formatDuration, formatMs } from "../../format/units";
import { lowerBound, upperBound } from "../lod/visibleRange";
import type { DirectionSeries } from "../series/columns";
import type { EventName } from "../series/events";
import { countMarks, tcptraceMarks } from "../tcptrace/marks";
import type { EvidenceRange } from "./types";

/** The parts of the API's finding this module reads. */
export interface FindingEvidence {
  readonly rank: number;
  readonly code: string;
  readonly severity: string;
  readonly factor: string | null;
  readonly title: string;
  readonly time_lost_s?: number | null;
  readonly flows: readonly number[];
  readonly evidence: { readonly time_ranges_s?: readonly (readonly number[])[] } & Record<
    string,
    unknown
  >;
}

function countEvents(
  series: DirectionSeries,
  kind: EventName,
  ranges: readonly [number, number][],
): number {
  const bit = series.eventBits[kind];
  let n = 0;
  for (const [from, to] of ranges) {
    const hi = upperBound(series.time, to);
    for (let i = lowerBound(series.time, from); i < hi; i++)
      if ((series.events[i] as number) & bit) n++;
  }
  return n;
}

function total(ranges: readonly [number, number][]): number {
  return ranges.reduce((sum, [a, b]) => sum + (b - a), 0);
}

function numberIn(evidence: Readonly<Record<string, unknown>>, key: string): number | null {
  const v = evidence[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** The path's rate (bits/s) a bandwidth finding measured, when it did. */
function bottleneckOf(finding: FindingEvidence): number | null {
  return finding.factor === "bandwidth" ? numberIn(finding.evidence, "rate_bps") : null;
}

/**
 * The bottleneck rate (bits/s) the findings about `flowId` name: the rate its "bottleneck" label
 * says, which the bytes-in-flight graph's bandwidth-delay product then uses too. Null when no
 * finding measured the path.
 */
export function bottleneckRate(
  findings: readonly FindingEvidence[],
  flowId: number,
): number | null {
  for (const finding of findings) {
    if (!finding.flows.includes(flowId)) continue;
    const rate = bottleneckOf(finding);
    if (rate !== null && rate > 0) return rate;
  }
  return null;
}

/** Longest label drawn above the plot (the finding list above the graph has the full title). */
export const LABEL_MAX_CHARS = 28;

/**
 * The label of a finding's ranges: the finding's own numbers where its evidence carries them (so
 * the graph and the sentence above it agree), else the marks counted in the ranges.
 */
export function evidenceLabel(
  finding: FindingEvidence,
  ranges: readonly [number, number][],
  data: DirectionSeries,
  acks: DirectionSeries,
): string {
  const times = ranges.length > 1 ? ` × ${ranges.length}` : "";
  const e = finding.evidence;
  switch (finding.factor) {
    case "receiver_window": {
      // The flow's window-full marks, counted as the graph's legend counts them for the whole
      // flow (the ranges are only the longest stretches: their count would disagree with it).
      const n = countMarks(tcptraceMarks(data, acks)).window_full;
      return n > 0 ? `window full ×${n}` : `receiver window${times}`;
    }
    case "receiver_app": {
      const n = countEvents(acks, "zero_window", ranges);
      if (n > 0) return `zero window ${formatDuration(total(ranges))}`;
      // The ranges are a sample of the finding's time; its own total is what its sentence says.
      const lost = finding.time_lost_s;
      return `receiver slow ${formatDuration(typeof lost === "number" ? lost : total(ranges))}`;
    }
    case "loss": {
      const n = numberIn(e, "retransmissions") ?? countEvents(data, "retransmission", ranges);
      return `retransmissions ×${n}`;
    }
    case "nagle_delayed_ack": {
      const stalls = numberIn(e, "stalls");
      const median = numberIn(e, "median_stall_ms");
      if (stalls !== null && median !== null)
        return `stall ${formatDuration(median / 1000)} × ${stalls}`;
      return `stall${times}`;
    }
    case "application": {
      const turns = numberIn(e, "turns");
      if (turns !== null) return `stop-and-wait ×${turns}`;
      const sorted = ranges.map(([a, b]) => b - a).sort((a, b) => a - b);
      return `idle ${formatDuration(sorted[Math.floor(sorted.length / 2)] ?? 0)}${times}`;
    }
    case "sender_buffer": {
      const inFlight = numberIn(e, "bytes_in_flight");
      return inFlight !== null ? `in flight ≤ ${formatBytes(inFlight)}` : `sender buffer${times}`;
    }
    case "bandwidth": {
      const rate = bottleneckOf(finding);
      return rate !== null ? `bottleneck ${formatBitRate(rate)}` : `bottleneck${times}`;
    }
    case "slow_start": {
      const rounds = numberIn(e, "round_trips");
      return rounds !== null ? `slow start ${rounds} round trips` : `slow start${times}`;
    }
    case "latency": {
      const rtt = numberIn(e, "rtt_ms");
      return rtt !== null ? `round trips of ${formatMs(rtt)}` : `round trips${times}`;
    }
    default:
      // A label sits in the narrow margin above the plot: the title, cut to a few words.
      return finding.title.length > LABEL_MAX_CHARS
        ? `${finding.title.slice(0, LABEL_MAX_CHARS - 1).trimEnd()}…`
        : finding.title;
  }
}

/** The ranges of the findings about `flowId`, the first range of each finding labelled. */
export function evidenceRanges(
  findings: readonly FindingEvidence[],
  flowId: number,
  data: DirectionSeries,
  acks: DirectionSeries,
  highlight: number | null = null,
): EvidenceRange[] {
  const out: EvidenceRange[] = [];
  for (const finding of findings) {
    if (!finding.flows.includes(flowId)) continue;
    const ranges = timeRanges(finding.evidence.time_ranges_s);
    if (ranges.length === 0) continue;
    const label = evidenceLabel(finding, ranges, data, acks);
    const span = {
      from: Math.min(...ranges.map((r) => r[0])),
      to: Math.max(...ranges.map((r) => Math.max(r[0], r[1]))),
    };
    ranges.forEach(([from, to], k) => {
      out.push({
        key: `${finding.rank}:${k}`,
        from,
        to: Math.max(to, from),
        label,
        finding: finding.rank,
        highlighted: finding.rank === highlight,
        severity: finding.severity,
        span,
      });
    });
  }
  return out;
}

/** `evidence.time_ranges_s` as pairs of finite numbers; anything else in it is ignored. */
export function timeRanges(value: unknown): [number, number][] {
  if (!Array.isArray(value)) return [];
  const out: [number, number][] = [];
  for (const r of value) {
    if (Array.isArray(r) && typeof r[0] === "number" && typeof r[1] === "number") {
      if (Number.isFinite(r[0]) && Number.isFinite(r[1])) out.push([r[0], r[1]]);
    }
  }
  return out;
}
