// One transfer's data as one sequence: the data direction of each of its flows (the direction that
// carried more payload), flow after flow, on a time axis that starts at the transfer's start and
// with each flow's sequence numbers continuing where the previous flow's ended. Ten connections
// before and one pooled connection after then draw as one rising line each, on the same axes.

import { type DirectionSeries, seriesFromColumns } from "../../charts/series/columns";

export interface FlowPart {
  /** Both directions of one flow, whole (the overview). */
  readonly client_to_server: DirectionSeries;
  readonly server_to_client: DirectionSeries;
}

function payload(series: DirectionSeries): number {
  let sum = 0;
  for (let i = 0; i < series.length; i++) {
    const p = series.payloadLen[i] as number;
    if (p > 0) sum += p;
  }
  return sum;
}

/** The data direction of a flow: the one that carried more payload. */
export function dataDirection(part: FlowPart): DirectionSeries {
  return payload(part.server_to_client) > payload(part.client_to_server)
    ? part.server_to_client
    : part.client_to_server;
}

/** The flows' data segments as one series: time − `start`, sequence + the bytes before it. */
export function transferSeries(parts: readonly FlowPart[], start: number): DirectionSeries {
  const time: number[] = [];
  const seq: number[] = [];
  const len: number[] = [];
  const resent: number[] = [];
  const frame: number[] = [];
  let offset = 0;
  for (const part of parts) {
    const data = dataDirection(part);
    let top = 0;
    for (let i = 0; i < data.length; i++) {
      const p = data.payloadLen[i] as number;
      if (!(p > 0)) continue;
      const s = data.seq[i] as number;
      time.push((data.time[i] as number) - start);
      seq.push(offset + s);
      len.push(p);
      resent.push(data.resent[i] as number);
      frame.push(data.frame[i] as number);
      top = Math.max(top, s + p);
    }
    offset += top;
  }
  // rows in time order (flows in parallel interleave)
  const order = time.map((_, i) => i).sort((a, b) => (time[a] as number) - (time[b] as number));
  const pick = (values: number[]) => order.map((i) => values[i] as number);
  return seriesFromColumns(dataDirection(parts[0] ?? emptyPart()).direction, {
    columns: {
      time_s: pick(time),
      seq: pick(seq),
      payload_len: pick(len),
      resent: pick(resent),
      frame: pick(frame),
    },
  });
}

function emptyPart(): FlowPart {
  const empty = seriesFromColumns("client_to_server", { columns: { time_s: [] } });
  return { client_to_server: empty, server_to_client: { ...empty, direction: "server_to_client" } };
}
