import type { HoverItem } from "../frame/types";
import type { DirectionSeries } from "../series/columns";
import type { TimeView } from "../view";

/** A finding's evidence on the time axis: a shaded range with a label ("window full ×420"). */
export interface EvidenceRange {
  readonly key: string;
  readonly from: number;
  readonly to: number;
  readonly label: string;
  readonly severity: string;
  /** The finding's rank: its ranges share one label, shown on the first range in view. */
  readonly finding: number;
  /** The finding the link pointed at (`finding=` in the URL): drawn stronger. */
  readonly highlighted: boolean;
  /** The span of all the finding's ranges: what clicking its label zooms to. */
  readonly span: { readonly from: number; readonly to: number };
}

/** What every graph of a flow gets. */
export interface FlowGraphProps {
  /** The direction being graphed (the data sender's packets). */
  readonly data: DirectionSeries;
  /** The reverse direction: the receiver's ACKs, windows and SACK blocks. */
  readonly acks: DirectionSeries;
  /** Handshake RTT of the flow in seconds (SYN → SYN/ACK → ACK), NaN when not captured. */
  readonly handshakeRtt: number;
  /** The flow's RTT summary (median and 95th percentile, seconds) from the analysis, when known. */
  readonly rttSummary: { readonly median: number; readonly p95: number } | null;
  /** Names of the two ends as "sender → receiver" for titles. */
  readonly senderLabel: string;
  readonly bounds: TimeView;
  readonly view: TimeView;
  readonly onViewChange: (view: TimeView) => void;
  readonly evidence: readonly EvidenceRange[];
  /**
   * The path's bottleneck rate (bits/s) a finding about this flow measured (its "bottleneck"
   * label's), null when none did: the bandwidth-delay product uses it before any other rate.
   */
  readonly bottleneckRate: number | null;
  readonly onPick: (item: HoverItem) => void;
  /** The time axis' title when the times are not seconds since the capture's start. */
  readonly timeLabel?: string;
}
