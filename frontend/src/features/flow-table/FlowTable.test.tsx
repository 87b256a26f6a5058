import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { useState } from "react";
import { MemoryRouter } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import { FlowTable } from "./FlowTable";
import { DEFAULT_VIEW, type FlowRow, type TableView } from "./flowRows";

afterEach(cleanup);

function row(id: number, change: Partial<FlowRow>): FlowRow {
  return {
    id,
    client: `10.0.0.1:${40000 + id}`,
    server: "10.0.0.2:80",
    startS: id,
    durationS: 1,
    bytesClientToServer: 100,
    bytesServerToClient: 1000,
    throughputBps: 8000,
    handshakeRttMs: 20,
    retransmissions: 0,
    limitingFactor: "latency",
    timeLostS: 0,
    encapsulation: null,
    ...change,
  };
}

const ROWS: FlowRow[] = [
  row(1, { throughputBps: 2_000_000, retransmissions: 4, limitingFactor: "loss", timeLostS: 0.5 }),
  row(2, {
    throughputBps: 35_000_000,
    server: "192.0.2.7:443",
    timeLostS: 0,
    encapsulation: "VLAN+PPPoE",
  }),
  row(3, { throughputBps: null, handshakeRttMs: null, limitingFactor: null, timeLostS: null }),
  row(4, {
    throughputBps: 900_000,
    limitingFactor: "receiver_window",
    timeLostS: 3.2,
    bytesClientToServer: 5_000_000,
  }),
];

function Harness({ initial = DEFAULT_VIEW }: { initial?: TableView }) {
  const [view, setView] = useState(initial);
  return (
    <MemoryRouter>
      <FlowTable
        scope={{ kind: "capture", captureId: "c1" }}
        rows={ROWS}
        view={view}
        onViewChange={setView}
      />
    </MemoryRouter>
  );
}

/** Flow numbers of the body rows, top to bottom. */
function order(): number[] {
  const body = screen.getAllByRole("rowgroup")[1];
  if (!body) throw new Error("no tbody");
  return within(body)
    .getAllByRole("row")
    .map((r) => Number(r.getAttribute("data-flow")));
}

function header(name: string): HTMLElement {
  return screen.getByRole("button", { name: new RegExp(`^${name}`) });
}

describe("FlowTable", () => {
  it("starts sorted by time lost, biggest first, unknown last", () => {
    render(<Harness />);
    expect(order()).toEqual([4, 1, 2, 3]);
    const th = header("Time lost").closest("th");
    expect(th?.getAttribute("aria-sort")).toBe("descending");
  });

  it("sorts by throughput descending on first click, ascending on the second", () => {
    render(<Harness />);
    fireEvent.click(header("Throughput"));
    expect(order()).toEqual([2, 1, 4, 3]);
    expect(header("Throughput").closest("th")?.getAttribute("aria-sort")).toBe("descending");
    fireEvent.click(header("Throughput"));
    expect(order()).toEqual([4, 1, 2, 3]); // unknown throughput stays last either way
    expect(header("Throughput").closest("th")?.getAttribute("aria-sort")).toBe("ascending");
  });

  it("sorts text columns alphabetically and numbers numerically", () => {
    render(<Harness />);
    fireEvent.click(header("Server"));
    expect(order()[3]).toBe(2); // 192.0.2.7 after 10.0.0.2 in natural order
    fireEvent.click(header("#"));
    expect(order()).toEqual([1, 2, 3, 4]);
  });

  it("shows the numbers in engineers' units", () => {
    render(<Harness />);
    const flow4 = screen.getAllByRole("row").find((r) => r.getAttribute("data-flow") === "4");
    expect(flow4?.textContent).toContain("5.00 MB");
    expect(flow4?.textContent).toContain("900 kbit/s");
    expect(flow4?.textContent).toContain("Receiver window");
    expect(flow4?.textContent).toContain("3.2 s");
  });

  it("filters by text over addresses and by limiting factor, and counts what is shown", () => {
    render(<Harness />);
    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "192.0.2" } });
    expect(order()).toEqual([2]);
    expect(screen.getByText("1 of 4 flows")).toBeTruthy();

    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "" } });
    fireEvent.change(screen.getByRole("combobox", { name: "Limited by" }), {
      target: { value: "loss" },
    });
    expect(order()).toEqual([1]);

    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "nothing-like-this" } });
    expect(screen.getByText("No flow matches the filter.")).toBeTruthy();
  });

  it("tags a flow seen inside tunnels with them, and filters by them", () => {
    render(<Harness />);
    const tag = screen.getByTitle("Seen inside these tunnels");
    expect(tag.textContent).toBe("VLAN+PPPoE");
    expect(tag.closest("tr")?.getAttribute("data-flow")).toBe("2");
    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "pppoe" } });
    expect(order()).toEqual([2]);
  });

  it("links each flow to its graphs", () => {
    render(<Harness />);
    const link = screen.getByRole("link", { name: "Flow 4 graphs" });
    expect(link.getAttribute("href")).toBe("/captures/c1/flows/4");
  });
});
