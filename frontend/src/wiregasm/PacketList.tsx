// The flow's packets as Wireshark lists them (its columns and colouring rules), virtualised: only
// the rows in the scroll window exist in the DOM, fetched from the worker a page at a time. The
// worker holds the flow's packets only, so every frame it has is listed.

import { useEffect, useRef, useState } from "react";
import type { FlowPackets } from "./flowPackets";
import { cssColor } from "./hex";
import type { FrameRow } from "./protocol";

export const ROW_HEIGHT = 22;
const PAGE = 200;
const OVERSCAN = 8;

export function PacketList(props: {
  packets: FlowPackets;
  columns: readonly string[];
  selected: number | null;
  onSelect: (frame: number) => void;
  height?: number;
}) {
  const { packets, selected } = props;
  const height = props.height ?? 280;
  const [matched, setMatched] = useState<number | null>(null);
  const [pages, setPages] = useState<ReadonlyMap<number, readonly FrameRow[]>>(new Map());
  const [scrollTop, setScrollTop] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const requested = useRef(new Set<number>());
  const scroller = useRef<HTMLDivElement>(null);

  useEffect(() => {
    requested.current = new Set([0]);
    setPages(new Map());
    setMatched(null);
    packets.rows(0, PAGE).then(
      (page) => {
        setMatched(page.matched);
        setPages(new Map([[0, page.rows]]));
      },
      (e: Error) => setError(e.message),
    );
  }, [packets]);

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(matched ?? 0, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);

  useEffect(() => {
    if (matched === null) return;
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last - 1) / PAGE); p++) {
      if (requested.current.has(p)) continue;
      requested.current.add(p);
      packets.rows(p * PAGE, PAGE).then(
        (page) => setPages((old) => new Map(old).set(p, page.rows)),
        (e: Error) => setError(e.message),
      );
    }
  }, [packets, first, last, matched]);

  // Bring the selected frame into view: its row is its place among the flow's frames.
  useEffect(() => {
    if (selected === null || matched === null) return;
    const index = packets.indexOf(selected);
    const el = scroller.current;
    if (index === null || !el) return;
    const top = index * ROW_HEIGHT;
    if (top < el.scrollTop || top > el.scrollTop + height - ROW_HEIGHT)
      el.scrollTop = Math.max(0, top - height / 3);
  }, [packets, selected, matched, height]);

  if (error)
    return (
      <div className="packet-list-error" role="alert">
        {error}
      </div>
    );
  const rows: { index: number; row: FrameRow | undefined }[] = [];
  for (let i = first; i < last; i++)
    rows.push({ index: i, row: pages.get(Math.floor(i / PAGE))?.[i % PAGE] });

  return (
    <div className="packet-list" data-testid="packet-list" data-matched={matched ?? ""}>
      <div className="packet-list-head">
        {props.columns.map((c) => (
          <span key={c} className={`col col-${c.replace(/\W/g, "").toLowerCase()}`}>
            {c}
          </span>
        ))}
      </div>
      <div
        ref={scroller}
        className="packet-list-body"
        style={{ height }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      >
        <div style={{ height: (matched ?? 0) * ROW_HEIGHT, position: "relative" }}>
          {rows.map(({ index, row }) => (
            <button
              type="button"
              key={index}
              aria-pressed={row?.number === selected}
              className={row?.number === selected ? "packet-row selected" : "packet-row"}
              style={{
                top: index * ROW_HEIGHT,
                height: ROW_HEIGHT,
                ...(row && row.number !== selected
                  ? { background: cssColor(row.bg), color: cssColor(row.fg) }
                  : {}),
              }}
              onClick={() => row && props.onSelect(row.number)}
            >
              {row
                ? row.columns.map((text, k) => (
                    <span
                      key={props.columns[k] ?? k}
                      className={`col col-${(props.columns[k] ?? "").replace(/\W/g, "").toLowerCase()}`}
                    >
                      {text}
                    </span>
                  ))
                : null}
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}
