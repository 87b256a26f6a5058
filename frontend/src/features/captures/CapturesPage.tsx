import { useState } from "react";
import { Link } from "react-router";
import { useCaptureList, useDeleteCapture } from "../../api/captures";
import { errorMessage } from "../../api/http";
import type { Capture } from "../../api/types";
import { Skeleton } from "../../app/Skeleton";
import { useCurrentWorkspace } from "../../app/workspace";
import { formatBytes, formatPercent } from "../../format/units";
import { FilePicker } from "../upload/FilePicker";
import { StorageUsage } from "./StorageUsage";

/** The workspace's captures, newest first, and the way in for new ones. */
export function CapturesPage() {
  const workspace = useCurrentWorkspace();
  const list = useCaptureList(workspace?.id);
  const remove = useDeleteCapture();
  const captures = list.data?.pages.flatMap((page) => page.items) ?? [];
  // Two analysed captures picked to compare, in the order picked (the first is BEFORE).
  const [picked, setPicked] = useState<string[]>([]);
  const pick = (id: string, on: boolean) =>
    setPicked((now) =>
      on ? [...now.filter((p) => p !== id), id].slice(-2) : now.filter((p) => p !== id),
    );
  const byAge = picked
    .map((id) => captures.find((c) => c.id === id))
    .filter((c): c is Capture => c !== undefined)
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
          {byAge.length === 2 ? (
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

      {list.isPending ? (
        <Skeleton className="skeleton--table" label="Loading captures" />
      ) : list.isError ? (
        <div className="panel panel--error" role="alert">
          {errorMessage(list.error)}
        </div>
      ) : captures.length === 0 ? (
        <div className="drop-hint">
          <p className="drop-hint__title">No captures yet</p>
          <p className="muted">
            Drag a capture from your desktop onto this page. Make one with{" "}
            <code>tcpdump -i any -s 128 -w slow.pcap port 443</code> while the slow transfer runs.
          </p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Compare</span>
                </th>
                <th scope="col">Capture</th>
                <th scope="col">Status</th>
                <th scope="col">Top finding</th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col" className="num">
                  Uploaded
                </th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {captures.map((capture) => (
                <tr key={capture.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Compare ${capture.filename}`}
                      disabled={capture.status !== "done"}
                      checked={picked.includes(capture.id)}
                      onChange={(e) => pick(capture.id, e.target.checked)}
                    />
                  </td>
                  <td>
                    <Link to={`/captures/${capture.id}`} className="strong-link">
                      {capture.filename}
                    </Link>
                  </td>
                  <td>
                    <StatusPill capture={capture} />
                  </td>
                  <td>
                    <TopFindingCell capture={capture} />
                  </td>
                  <td className="num">{formatBytes(capture.size_bytes)}</td>
                  <td className="num">{new Date(capture.created_at).toLocaleString()}</td>
                  <td className="table__actions">
                    <button
                      type="button"
                      className="button button--quiet button--small"
                      aria-label={`Delete ${capture.filename}`}
                      disabled={remove.isPending}
                      onClick={() => {
                        if (window.confirm(`Delete ${capture.filename} and its analysis?`)) {
                          remove.mutate(capture.id);
                        }
                      }}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasNextPage && (
        <button
          type="button"
          className="button"
          disabled={list.isFetchingNextPage}
          onClick={() => void list.fetchNextPage()}
        >
          Show older captures
        </button>
      )}
    </div>
  );
}

function StatusPill({ capture }: { capture: Capture }) {
  const { status, progress } = capture;
  const text =
    status === "running" && progress.bytes_total > 0
      ? `analysing ${formatPercent(progress.bytes_done / progress.bytes_total)}`
      : status === "done"
        ? "analysed"
        : status;
  return (
    <span className={`pill pill--${status}`} title={capture.error?.message}>
      {text}
    </span>
  );
}

/** The capture's most important finding: its severity and title, a link to the diagnosis. */
export function TopFindingCell({ capture }: { capture: Capture }) {
  const top = capture.top_finding;
  if (!top)
    return <span className="muted">{capture.status === "done" ? "nothing found" : ""}</span>;
  return (
    <Link to={`/captures/${capture.id}`} className="top-finding" data-code={top.code}>
      <span className={`severity severity--${top.severity}`}>{top.severity}</span> {top.title}
    </Link>
  );
}
