import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { isSettled, useCapture, useCaptureList, useDeleteCaptures } from "../../api/captures";
import { errorMessage } from "../../api/http";
import type { Capture } from "../../api/types";
import { Dialog } from "../../app/Dialog";
import { DangerButton } from "../../app/RowActions";
import { Skeleton } from "../../app/Skeleton";
import { SortHeader } from "../../app/SortHeader";
import { useCurrentWorkspace } from "../../app/workspace";
import { formatBytes, formatPercent } from "../../format/units";
import { FilePicker } from "../upload/FilePicker";
import {
  type CaptureSort,
  type ListView,
  listQuery,
  PAGE_SIZE,
  pageCount,
  readListView,
  sortBy,
  writeListView,
} from "./listView";
import { StorageUsage } from "./StorageUsage";

/** A search reaches the URL (and the server) once typing has paused this long. */
export const SEARCH_DELAY_MS = 300;

const COLUMNS: readonly { sort: CaptureSort; label: string; numeric?: boolean }[] = [
  { sort: "filename", label: "Capture" },
  { sort: "status", label: "Status" },
  { sort: "top_finding", label: "Top finding" },
  { sort: "size", label: "Size", numeric: true },
  { sort: "created", label: "Uploaded", numeric: true },
];

/** The workspace's captures: sorted, searched and paged by the server, and the way in for new ones. */
export function CapturesPage() {
  const workspace = useCurrentWorkspace();
  const [params, setParams] = useSearchParams();
  const view = readListView(params);
  const list = useCaptureList(workspace?.id, listQuery(view));
  const remove = useDeleteCaptures();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const captures = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const pages = pageCount(total);
  const searching = view.q !== "" || view.finding !== "";

  const show = (next: ListView) => setParams(writeListView(next), { replace: false });
  // Selection belongs to the rows on screen: another page or search starts with none.
  const pageKey = JSON.stringify(listQuery(view));
  useEffect(() => {
    void pageKey;
    setSelected(new Set());
  }, [pageKey]);
  const shownIds = captures.map((c) => c.id);
  const allSelected = shownIds.length > 0 && shownIds.every((id) => selected.has(id));
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const doomed = captures.filter((c) => selected.has(c.id));
  // Two analysed captures selected: they can be compared, the older one as BEFORE.
  const byAge = doomed
    .filter((c) => c.status === "done")
    .sort((a, b) => a.created_at.localeCompare(b.created_at));

  return (
    <div className="captures-page">
      <header className="page-header">
        <div>
          <h1 className="page-title">Captures</h1>
          <p className="muted">
            Drop pcap or pcapng files anywhere on this page, or choose them. tcplens tells you why
            each transfer was slow, with the numbers and the fix.
          </p>
          <StorageUsage workspaceId={workspace?.id} />
        </div>
        <FilePicker />
      </header>

      {captures.some((c) => c.status === "done") && (
        <p className="compare-bar">
          {byAge.length === 2 && doomed.length === 2 ? (
            <Link
              className="button button--primary"
              data-testid="compare-picked"
              to={`/compare?before=${byAge[0]?.id}&after=${byAge[1]?.id}`}
            >
              Compare {byAge[0]?.filename} → {byAge[1]?.filename}
            </Link>
          ) : (
            <span className="muted">
              Tick two analysed captures of the same transfer to compare them (before → after).
            </span>
          )}
        </p>
      )}

      <search className="list-tools" aria-label="Search captures">
        <SearchField
          label="Name"
          placeholder="Search by file name"
          value={view.q}
          onChange={(q) => show({ ...view, q, page: 1 })}
        />
        <SearchField
          label="Finding"
          placeholder="e.g. packet-loss or window"
          value={view.finding}
          onChange={(finding) => show({ ...view, finding, page: 1 })}
        />
        <span className="list-tools__count" aria-live="polite" data-testid="capture-count">
          {list.isSuccess
            ? `${total} ${total === 1 ? "capture" : "captures"}${searching ? " found" : ""}`
            : ""}
        </span>
        {selected.size > 0 ? (
          <DangerButton onClick={() => setConfirming(true)}>
            Delete {selected.size} selected
          </DangerButton>
        ) : null}
      </search>

      {list.isPending ? (
        <Skeleton className="skeleton--table" label="Loading captures" />
      ) : list.isError ? (
        <div className="panel panel--error" role="alert">
          {errorMessage(list.error)}
        </div>
      ) : total === 0 && !searching ? (
        <div className="drop-hint">
          <p className="drop-hint__title">No captures yet</p>
          <p className="muted">
            Drag a capture from your desktop onto this page. Make one with{" "}
            <code>tcpdump -i any -s 128 -w slow.pcap port 443</code> while the slow transfer runs.
          </p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="table captures-table" aria-busy={list.isPlaceholderData}>
            <colgroup>
              <col className="captures-table__select" />
              <col className="captures-table__name" />
              <col className="captures-table__status" />
              <col className="captures-table__finding" />
              <col className="captures-table__size" />
              <col className="captures-table__uploaded" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select every capture on this page"
                    checked={allSelected}
                    disabled={shownIds.length === 0}
                    onChange={() => setSelected(allSelected ? new Set() : new Set(shownIds))}
                  />
                </th>
                {COLUMNS.map((column) => (
                  <SortHeader
                    key={column.sort}
                    label={column.label}
                    numeric={column.numeric}
                    order={view.sort === column.sort ? view.order : null}
                    onSort={() => show(sortBy(view, column.sort))}
                  />
                ))}
              </tr>
            </thead>
            <tbody>
              {captures.length === 0 ? (
                <tr>
                  <td colSpan={6} className="table__empty">
                    No capture matches this search.
                  </td>
                </tr>
              ) : (
                captures.map((capture) => (
                  <tr key={capture.id} data-capture={capture.id}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select ${capture.filename}`}
                        checked={selected.has(capture.id)}
                        onChange={() => toggle(capture.id)}
                      />
                    </td>
                    <td className="captures-table__cut">
                      <Link
                        to={`/captures/${capture.id}`}
                        className="strong-link"
                        title={capture.filename}
                      >
                        {capture.filename}
                      </Link>
                    </td>
                    <td>
                      <StatusCell capture={capture} />
                    </td>
                    <td className="captures-table__cut">
                      <TopFindingCell capture={capture} />
                    </td>
                    <td className="num">{formatBytes(capture.size_bytes)}</td>
                    <td className="num">
                      <time dateTime={capture.created_at}>
                        {new Date(capture.created_at).toLocaleString()}
                      </time>
                    </td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 ? (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="button button--small"
            disabled={view.page <= 1}
            onClick={() => show({ ...view, page: view.page - 1 })}
          >
            Previous
          </button>
          <span data-testid="page-of">
            Page {Math.min(view.page, pages)} of {pages} ({(view.page - 1) * PAGE_SIZE + 1}–
            {Math.min(view.page * PAGE_SIZE, total)} of {total})
          </span>
          <button
            type="button"
            className="button button--small"
            disabled={view.page >= pages}
            onClick={() => show({ ...view, page: view.page + 1 })}
          >
            Next
          </button>
        </nav>
      ) : null}
      {confirming ? (
        <Dialog
          title={`Delete ${doomed.length} ${doomed.length === 1 ? "capture" : "captures"}?`}
          onClose={() => setConfirming(false)}
        >
          <p>
            These captures, their analyses and their share links are deleted for everyone in the
            workspace. This cannot be undone.
          </p>
          <ul className="delete-list">
            {doomed.map((c) => (
              <li key={c.id} className="mono">
                {c.filename}
              </li>
            ))}
          </ul>
          {remove.isError ? (
            <p role="alert" className="form-error">
              {errorMessage(remove.error)}
            </p>
          ) : null}
          <div className="dialog__actions">
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
            <button
              type="button"
              className="button button--danger"
              disabled={remove.isPending || doomed.length === 0}
              onClick={() =>
                remove.mutate(
                  doomed.map((c) => c.id),
                  {
                    onSuccess: () => {
                      setSelected(new Set());
                      setConfirming(false);
                    },
                  },
                )
              }
            >
              Delete
            </button>
          </div>
        </Dialog>
      ) : null}
    </div>
  );
}

/** A search box that reports its text once typing pauses (and at once on Enter). */
function SearchField(props: {
  label: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
}) {
  const [text, setText] = useState(props.value);
  const { value, onChange } = props;
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => onChange(text), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, value, onChange]);
  return (
    <label className="list-tools__field">
      <span>{props.label}</span>
      <input
        type="search"
        className="input"
        value={text}
        maxLength={200}
        placeholder={props.placeholder}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") onChange(text);
        }}
      />
    </label>
  );
}

/**
 * A row's status. While the list says the capture is queued or running, the row follows the
 * capture's own query (polled every ANALYSIS_POLL_MS, the one the upload tray and the capture
 * page follow), so it moves with them instead of waiting for the list's next read.
 */
function StatusCell({ capture }: { capture: Capture }) {
  return capture.status === "done" || capture.status === "failed" ? (
    <StatusPill capture={capture} />
  ) : (
    <LiveStatus capture={capture} />
  );
}

function LiveStatus({ capture }: { capture: Capture }) {
  const live = useCapture({ kind: "capture", captureId: capture.id });
  const client = useQueryClient();
  const settled = isSettled(live.data);
  // Finished: read the list again for the row's top finding.
  useEffect(() => {
    if (settled) void client.invalidateQueries({ queryKey: ["captures"] });
  }, [settled, client]);
  return <StatusPill capture={live.data ?? capture} />;
}

export function statusText(capture: Pick<Capture, "status" | "progress">): string {
  const { status, progress } = capture;
  if (status === "running" && progress.bytes_total > 0)
    return `analysing ${formatPercent(progress.bytes_done / progress.bytes_total)}`;
  if (status === "running") return "analysing";
  return status === "done" ? "analysed" : status;
}

function StatusPill({ capture }: { capture: Capture }) {
  return (
    <span
      className={`pill pill--${capture.status}`}
      title={capture.error?.message}
      data-status={capture.status}
    >
      {statusText(capture)}
    </span>
  );
}

/** The capture's most important finding: its severity and title, a link to the diagnosis. */
export function TopFindingCell({ capture }: { capture: Capture }) {
  const top = capture.top_finding;
  if (!top)
    return <span className="muted">{capture.status === "done" ? "nothing found" : ""}</span>;
  return (
    <Link
      to={`/captures/${capture.id}`}
      className="top-finding"
      data-code={top.code}
      title={top.title}
    >
      <span className={`severity severity--${top.severity}`}>{top.severity}</span> {top.title}
    </Link>
  );
}
