// The flow table's rows and the pure sort/filter over them (the table keeps them in the URL).

export interface FlowRow {
  id: number;
  client: string;
  server: string;
  startS: number;
  durationS: number;
  bytesClientToServer: number;
  bytesServerToClient: number;
  /** Payload bytes of both directions over the flow's duration, bits per second. */
  throughputBps: number | null;
  handshakeRttMs: number | null;
  retransmissions: number;
  limitingFactor: string | null;
  timeLostS: number | null;
  /** The tunnels its packets came through ("GRE", "VLAN+PPPoE", ...), null for none. */
  encapsulation: string | null;
}

export type SortKey =
  | "id"
  | "client"
  | "server"
  | "bytesClientToServer"
  | "bytesServerToClient"
  | "durationS"
  | "throughputBps"
  | "handshakeRttMs"
  | "retransmissions"
  | "limitingFactor"
  | "timeLostS";

export type SortOrder = "asc" | "desc";

export interface TableView {
  sort: SortKey;
  order: SortOrder;
  /** Free text matched against client, server and limiting factor (case-insensitive). */
  query: string;
  /** Only flows held back by this factor; "" for all. */
  factor: string;
}

export const DEFAULT_VIEW: TableView = { sort: "timeLostS", order: "desc", query: "", factor: "" };

export const SORT_KEYS: readonly SortKey[] = [
  "id",
  "client",
  "server",
  "bytesClientToServer",
  "bytesServerToClient",
  "durationS",
  "throughputBps",
  "handshakeRttMs",
  "retransmissions",
  "limitingFactor",
  "timeLostS",
];

export function isSortKey(value: string | null): value is SortKey {
  return value !== null && (SORT_KEYS as readonly string[]).includes(value);
}

/** Numbers sort numerically, text by locale; unknown values (null) always go last. */
export function compareRows(a: FlowRow, b: FlowRow, key: SortKey, order: SortOrder): number {
  const va = a[key];
  const vb = b[key];
  if (va === null && vb === null) return a.id - b.id;
  if (va === null) return 1;
  if (vb === null) return -1;
  const base =
    typeof va === "number" && typeof vb === "number"
      ? va - vb
      : String(va).localeCompare(String(vb), undefined, { numeric: true });
  // Ties keep the capture order so the table does not reshuffle between renders.
  return (order === "asc" ? base : -base) || a.id - b.id;
}

export function matchesView(row: FlowRow, view: TableView): boolean {
  if (view.factor && row.limitingFactor !== view.factor) return false;
  const query = view.query.trim().toLowerCase();
  if (!query) return true;
  return [
    row.client,
    row.server,
    row.limitingFactor ?? "",
    row.encapsulation ?? "",
    String(row.id),
  ].some((field) => field.toLowerCase().includes(query));
}

export function applyView(rows: readonly FlowRow[], view: TableView): FlowRow[] {
  return rows
    .filter((row) => matchesView(row, view))
    .sort((a, b) => compareRows(a, b, view.sort, view.order));
}
