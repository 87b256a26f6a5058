import { useMemo, useState } from "react";
import { Link } from "react-router";
import type { CaptureScope } from "../../api/scope";
import { SortHeader } from "../../app/SortHeader";
import {
  factorLabel,
  formatBitRate,
  formatBytes,
  formatDuration,
  formatMs,
} from "../../format/units";
import { flowPageHref } from "../../routes/flowLink";
import { applyView, type FlowRow, type SortKey, type TableView } from "./flowRows";

interface Column {
  key: SortKey;
  label: string;
  title: string;
  numeric: boolean;
  /** Bigger first is what one wants to see first for these. */
  descFirst: boolean;
  render: (row: FlowRow) => string;
}

const COLUMNS: readonly Column[] = [
  {
    key: "id",
    label: "#",
    title: "Flow number, in order of first packet",
    numeric: true,
    descFirst: false,
    render: (r) => String(r.id),
  },
  {
    key: "client",
    label: "Client",
    title: "The side that sent the SYN",
    numeric: false,
    descFirst: false,
    render: (r) => r.client,
  },
  {
    key: "server",
    label: "Server",
    title: "The side that answered the SYN",
    numeric: false,
    descFirst: false,
    render: (r) => r.server,
  },
  {
    key: "bytesClientToServer",
    label: "Bytes →",
    title: "Payload bytes client → server",
    numeric: true,
    descFirst: true,
    render: (r) => formatBytes(r.bytesClientToServer),
  },
  {
    key: "bytesServerToClient",
    label: "Bytes ←",
    title: "Payload bytes server → client",
    numeric: true,
    descFirst: true,
    render: (r) => formatBytes(r.bytesServerToClient),
  },
  {
    key: "durationS",
    label: "Duration",
    title: "First to last packet",
    numeric: true,
    descFirst: true,
    render: (r) => formatDuration(r.durationS),
  },
  {
    key: "throughputBps",
    label: "Throughput",
    title: "Payload bits per second over the flow's duration",
    numeric: true,
    descFirst: true,
    render: (r) => (r.throughputBps === null ? "–" : formatBitRate(r.throughputBps)),
  },
  {
    key: "handshakeRttMs",
    label: "Handshake RTT",
    title: "SYN → SYN/ACK → ACK at the capture point",
    numeric: true,
    descFirst: true,
    render: (r) => (r.handshakeRttMs === null ? "–" : formatMs(r.handshakeRttMs)),
  },
  {
    key: "retransmissions",
    label: "Retrans.",
    title: "Retransmitted segments (Wireshark's tcp.analysis.retransmission)",
    numeric: true,
    descFirst: true,
    render: (r) => String(r.retransmissions),
  },
  {
    key: "limitingFactor",
    label: "Limited by",
    title: "What held this flow back most of its time",
    numeric: false,
    descFirst: false,
    render: (r) => factorLabel(r.limitingFactor),
  },
  {
    key: "timeLostS",
    label: "Time lost",
    title: "Time the limiting factor cost this flow",
    numeric: true,
    descFirst: true,
    render: (r) => (r.timeLostS === null ? "–" : formatDuration(r.timeLostS)),
  },
];

/** Rendering thousands of rows costs more than it helps; the rest are one click away. */
const FIRST_ROWS = 300;

export interface FlowTableProps {
  scope: CaptureScope;
  rows: readonly FlowRow[];
  view: TableView;
  onViewChange: (view: TableView) => void;
}

export function FlowTable({ scope, rows, view, onViewChange }: FlowTableProps) {
  const [showAll, setShowAll] = useState(false);
  const shown = useMemo(() => applyView(rows, view), [rows, view]);
  const factors = useMemo(
    () => [...new Set(rows.map((r) => r.limitingFactor).filter((f): f is string => !!f))].sort(),
    [rows],
  );
  const visible = showAll ? shown : shown.slice(0, FIRST_ROWS);

  const sortBy = (column: Column) => {
    const order =
      view.sort === column.key
        ? view.order === "asc"
          ? "desc"
          : "asc"
        : column.descFirst
          ? "desc"
          : "asc";
    onViewChange({ ...view, sort: column.key, order });
  };

  return (
    <div className="flow-table">
      <div className="flow-table__tools">
        <label className="field field--inline">
          <span className="field__label">Filter</span>
          <input
            type="search"
            className="input"
            placeholder="address, port or factor"
            value={view.query}
            onChange={(event) => onViewChange({ ...view, query: event.currentTarget.value })}
          />
        </label>
        <label className="field field--inline">
          <span className="field__label">Limited by</span>
          <select
            className="input"
            value={view.factor}
            onChange={(event) => onViewChange({ ...view, factor: event.currentTarget.value })}
          >
            <option value="">any factor</option>
            {factors.map((factor) => (
              <option key={factor} value={factor}>
                {factorLabel(factor)}
              </option>
            ))}
          </select>
        </label>
        <span className="flow-table__count num" aria-live="polite">
          {shown.length === rows.length
            ? `${rows.length} flow${rows.length === 1 ? "" : "s"}`
            : `${shown.length} of ${rows.length} flows`}
        </span>
      </div>
      <div className="table-scroll">
        <table className="table">
          <thead>
            <tr>
              {COLUMNS.map((column) => (
                <SortHeader
                  key={column.key}
                  label={column.label}
                  title={column.title}
                  numeric={column.numeric}
                  order={view.sort === column.key ? view.order : null}
                  onSort={() => sortBy(column)}
                />
              ))}
            </tr>
          </thead>
          <tbody>
            {visible.map((row) => (
              <tr key={row.id} data-flow={row.id}>
                {COLUMNS.map((column) => (
                  <td
                    key={column.key}
                    className={
                      column.numeric ? "num" : column.key === "limitingFactor" ? undefined : "mono"
                    }
                  >
                    {column.key === "id" ? (
                      <Link to={flowPageHref(scope, row.id)} aria-label={`Flow ${row.id} graphs`}>
                        {row.id}
                      </Link>
                    ) : column.key === "client" && row.encapsulation ? (
                      <>
                        {column.render(row)}{" "}
                        <span className="tunnel-tag" title="Seen inside these tunnels">
                          {row.encapsulation}
                        </span>
                      </>
                    ) : column.key === "limitingFactor" && row.limitingFactor ? (
                      <span className={`factor factor--${row.limitingFactor}`}>
                        {column.render(row)}
                      </span>
                    ) : (
                      column.render(row)
                    )}
                  </td>
                ))}
              </tr>
            ))}
            {shown.length === 0 && (
              <tr>
                <td colSpan={COLUMNS.length} className="table__empty">
                  No flow matches the filter.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {!showAll && shown.length > FIRST_ROWS && (
        <button type="button" className="button" onClick={() => setShowAll(true)}>
          Show all {shown.length} flows
        </button>
      )}
    </div>
  );
}
