// RTT sample kinds (tcplens/tcp/model.py RTT_KIND_NAMES) and what each means on the graph.

export const RTT_KINDS = ["data_ack", "timestamp", "handshake_syn", "handshake_synack"] as const;
export type RttKind = (typeof RTT_KINDS)[number];

export const RTT_KIND_STYLES: Readonly<
  Record<RttKind, { label: string; color: string; meaning: string }>
> = {
  data_ack: {
    label: "Data → ACK (Karn)",
    color: "var(--chart-rtt-data-ack)",
    meaning:
      "blue dot: time from a data segment to the first ACK covering it; retransmitted segments are never timed (Karn's rule)",
  },
  timestamp: {
    label: "Timestamp echo",
    color: "var(--chart-rtt-timestamp)",
    meaning: "orange dot: time from a TSval to the first packet echoing it (RFC 7323 timestamps)",
  },
  handshake_syn: {
    label: "SYN → SYN/ACK",
    color: "var(--chart-rtt-handshake)",
    meaning: "green square: handshake round trip between the capture point and the server",
  },
  handshake_synack: {
    label: "SYN/ACK → ACK",
    color: "var(--chart-rtt-handshake)",
    meaning: "green square: handshake round trip between the capture point and the client",
  },
};
