// API flows and findings → connection timelines for the waterfall. The flow summary's `timeline`
// (report.py: syn_s, handshake_done_s, first_data_s, last_data_s, idle_gaps_s) gives the exact
// times; without it (results stored before it existed) the handshake is start + handshake RTT.
// DNS waits come from the DNS findings' evidence.

import type { Finding, Flow } from "../../api/types";
import { numberAt } from "../flow-table/fromApi";
import type { ConnectionTimeline } from "./geometry";

type Range = readonly [number, number];

function rangeOf(value: unknown): Range | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [a, b] = value as unknown[];
  return typeof a === "number" && typeof b === "number" && b >= a ? [a, b] : undefined;
}

function rangesOf(value: unknown): Range[] {
  if (!Array.isArray(value)) return [];
  return value.map(rangeOf).filter((r): r is Range => r !== undefined);
}

export function connectionTimelines(
  flows: readonly Flow[],
  findings: readonly Finding[],
): ConnectionTimeline[] {
  const dnsByFlow = new Map<number, Range>();
  for (const finding of findings) {
    if (finding.factor !== "dns") continue;
    const ranges = rangesOf(finding.evidence.time_ranges_s);
    if (ranges.length === 0) continue;
    // One range per flow when the counts match; otherwise the lookups (e.g. a reverse then a
    // forward query) together are the wait before each of the finding's flows.
    const perFlow = ranges.length === finding.flows.length;
    const span: Range = [
      Math.min(...ranges.map((r) => r[0])),
      Math.max(...ranges.map((r) => r[1])),
    ];
    finding.flows.forEach((flowId, index) => {
      const range = perFlow ? (ranges[index] ?? span) : span;
      if (!dnsByFlow.has(flowId)) dnsByFlow.set(flowId, range);
    });
  }

  return flows.map((flow) => {
    const summary = flow.summary;
    const timeline: unknown = summary.timeline;
    const at = (key: string) => numberAt(timeline, key);
    const startS = flow.start_s;
    const endS = flow.start_s + flow.duration_s;
    const synS = at("syn_s") ?? startS;
    const doneS = at("handshake_done_s");
    const rttMs = numberAt(summary, "handshake_rtt_ms");
    const handshakeS: Range | undefined =
      doneS !== null ? [synS, doneS] : rttMs !== null ? [synS, synS + rttMs / 1000] : undefined;
    const firstDataS = at("first_data_s");
    const lastDataS = at("last_data_s");
    const hasTimeline = timeline !== null && typeof timeline === "object";
    return {
      flowId: flow.id,
      label: flow.server,
      startS,
      endS,
      handshakeS,
      dataS: rangeOf([firstDataS, lastDataS]) ?? (hasTimeline ? null : undefined),
      // `dns_s` is not in the API's FlowSummary (yet): read it if a server sends it.
      dnsS: rangeOf((summary as Readonly<Record<string, unknown>>).dns_s) ?? dnsByFlow.get(flow.id),
      idleS: hasTimeline ? rangesOf((timeline as Record<string, unknown>).idle_gaps_s) : [],
    };
  });
}
