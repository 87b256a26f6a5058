// The series rows in a time window as CSV or JSON, one row per packet with its direction, in the
// API's column names (so a script reading the export reads the API the same way).

import { visibleRange } from "../lod/visibleRange";
import type { DirectionSeries } from "./columns";
import { EVENT_NAMES } from "./events";

export const EXPORT_COLUMNS = [
  "direction",
  "time_s",
  "frame",
  "seq",
  "payload_len",
  "ack",
  "window",
  "bytes_in_flight",
  "flags",
  "events",
] as const;

export type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number | null>;

export function rowsInView(
  series: readonly DirectionSeries[],
  from: number,
  to: number,
): ExportRow[] {
  const rows: ExportRow[] = [];
  for (const s of series) {
    const { lo, hi } = visibleRange(s.time, from, to);
    for (let i = lo; i < hi; i++) {
      const t = s.time[i] as number;
      if (t < from || t > to) continue; // visibleRange keeps one row of margin for drawing
      const num = (v: number) => (Number.isFinite(v) ? v : null);
      const bits = s.events[i] as number;
      rows.push({
        direction: s.direction,
        time_s: t,
        frame: num(s.frame[i] as number),
        seq: num(s.seq[i] as number),
        payload_len: num(s.payloadLen[i] as number),
        ack: num(s.ack[i] as number),
        window: num(s.window[i] as number),
        bytes_in_flight: num(s.bytesInFlight[i] as number),
        flags: s.flags[i] as number,
        events: EVENT_NAMES.filter((name) => bits & s.eventBits[name]).join(" "),
      });
    }
  }
  rows.sort((a, b) => (a.time_s as number) - (b.time_s as number));
  return rows;
}

export function rowsToCsv(rows: readonly ExportRow[]): string {
  const lines = [EXPORT_COLUMNS.join(",")];
  for (const row of rows) lines.push(EXPORT_COLUMNS.map((c) => row[c] ?? "").join(","));
  return `${lines.join("\n")}\n`;
}
