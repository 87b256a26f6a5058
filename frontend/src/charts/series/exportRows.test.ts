import { describe, expect, it } from "vitest";
import { seriesFromColumns } from "./columns";
import { rowsInView, rowsToCsv } from "./exportRows";

describe("export of the rows in view", () => {
  const c2s = seriesFromColumns("client_to_server", {
    columns: {
      time_s: [0, 1, 2, 3],
      frame: [1, 3, 5, 7],
      seq: [0, 1, 1449, 2897],
      payload_len: [0, 1448, 1448, 1448],
      bytes_in_flight: [-1, 1448, 2896, 2896],
      events: [0, 0, 1024, 1],
    },
  });
  const s2c = seriesFromColumns("server_to_client", {
    columns: {
      time_s: [0.5, 2.5],
      frame: [2, 6],
      ack: [1, 2897],
      window: [65535, 0],
      events: [0, 128],
    },
  });

  it("keeps only rows inside the window, both directions, in time order", () => {
    const rows = rowsInView([c2s, s2c], 1, 2.5);
    expect(rows.map((r) => r.frame)).toEqual([3, 5, 6]);
    expect(rows[1]?.events).toBe("window_full");
    expect(rows[2]?.events).toBe("zero_window");
    expect(rows[2]?.direction).toBe("server_to_client");
  });

  it("writes CSV with the API's column names and empty cells for unknowns", () => {
    const csv = rowsToCsv(rowsInView([c2s], 0, 0));
    expect(csv).toBe(
      "direction,time_s,frame,seq,payload_len,ack,window,bytes_in_flight,flags,events\nclient_to_server,0,1,0,0,,,,0,\n",
    );
  });
});
