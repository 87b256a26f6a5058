// Wireshark's tcp.analysis expert names, in the bit order of the backend's `events` column
// (tcplens/tcp/model.py EVENT_NAMES, generated into api/registry.gen.ts; DESIGN.md EVENT). The
// series response may name its own order in `event_kinds`; `eventBitsFrom` maps either to the bit
// each graph tests.

import { EVENT_NAMES } from "../../api/registry.gen";

export { EVENT_NAMES };

export type EventName = (typeof EVENT_NAMES)[number];

/** Event name → bit mask in the `events` column. */
export type EventBits = Readonly<Record<EventName, number>>;

export function eventBitsFrom(kinds: readonly string[] | undefined): EventBits {
  const order = kinds && kinds.length > 0 ? kinds : EVENT_NAMES;
  const bits = {} as Record<EventName, number>;
  for (const name of EVENT_NAMES) {
    const index = order.indexOf(name);
    // A kind the server does not know can never be set: bit 0 of nothing.
    bits[name] = index >= 0 ? 2 ** index : 0;
  }
  return bits;
}

// TCP header flags (RFC 9293 §3.1), as in the `flags` column.
export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;
