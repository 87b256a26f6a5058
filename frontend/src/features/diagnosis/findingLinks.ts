// Where a finding points: each flow it is about, with the time range of its evidence, so the
// flow page opens zoomed on the proof.

import type { CaptureScope } from "../../api/scope";
import type { Finding } from "../../api/types";
import { flowPageHref } from "../../routes/flowLink";

export interface FindingLink {
  flowId: number;
  href: string;
  fromS: number | undefined;
  toS: number | undefined;
}

/** The evidence's time ranges, in capture seconds, as [from, to] pairs that make sense. */
export function evidenceRanges(finding: Finding): [number, number][] {
  const raw = finding.evidence.time_ranges_s;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (r): r is [number, number] =>
      Array.isArray(r) &&
      r.length === 2 &&
      typeof r[0] === "number" &&
      typeof r[1] === "number" &&
      r[1] >= r[0],
  );
}

/**
 * One link per flow the finding names. The time range spans all of the evidence (the graph
 * page shades each range itself); with one range per flow, each flow gets its own.
 */
export function findingLinks(scope: CaptureScope, finding: Finding): FindingLink[] {
  const ranges = evidenceRanges(finding);
  const perFlow = ranges.length === finding.flows.length && finding.flows.length > 1;
  const span: [number, number] | undefined =
    ranges.length > 0
      ? [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))]
      : undefined;
  return finding.flows.map((flowId, index) => {
    const range = perFlow ? ranges[index] : span;
    return {
      flowId,
      fromS: range?.[0],
      toS: range?.[1],
      href: flowPageHref(scope, flowId, {
        from: range?.[0],
        to: range?.[1],
        finding: finding.rank,
      }),
    };
  });
}
