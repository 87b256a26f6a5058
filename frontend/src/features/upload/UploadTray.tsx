import { useEffect, useRef } from "react";
import { Link } from "react-router";
import { useCapture } from "../../api/captures";
import { formatBytes } from "../../format/units";
import { ProgressView } from "./ProgressView";
import { analysisState } from "./progressState";
import { type UploadEntry, useUploads } from "./UploadsContext";

/** The uploads of this tab, bottom right, each with its progress; dismissible once settled. */
export function UploadTray() {
  const { entries, dismiss } = useUploads();
  if (entries.length === 0) return null;
  return (
    <section className="upload-tray" aria-label="Uploads">
      <ul className="upload-tray__list">
        {entries.map((entry) => (
          <li key={entry.key} className="upload-tray__item">
            <div className="upload-tray__head">
              <span className="upload-tray__name" title={entry.name}>
                {entry.name}
              </span>
              <span className="upload-tray__size num">{formatBytes(entry.size)}</span>
              <button
                type="button"
                className="icon-button"
                aria-label={`Dismiss ${entry.name}`}
                onClick={() => dismiss(entry.key)}
              >
                ×
              </button>
            </div>
            {entry.captureId ? (
              <CaptureProgress
                captureId={entry.captureId}
                name={entry.name}
                onSettled={() => dismiss(entry.key)}
              />
            ) : (
              <ProgressView state={entry.send} label={entry.name} />
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A finished upload leaves the tray after this long; failed ones stay until dismissed. */
const DONE_LINGER_MS = 5000;

function CaptureProgress({
  captureId,
  name,
  onSettled,
}: {
  captureId: string;
  name: string;
  onSettled: () => void;
}) {
  const capture = useCapture({ kind: "capture", captureId });
  const done = capture.data?.status === "done";
  // The latest callback, without restarting the timer whenever the tray re-renders.
  const settle = useRef(onSettled);
  settle.current = onSettled;
  useEffect(() => {
    if (!done) return;
    const timer = window.setTimeout(() => settle.current(), DONE_LINGER_MS);
    return () => window.clearTimeout(timer);
  }, [done]);
  if (!capture.data) return <ProgressView state={{ kind: "queued" }} label={name} />;
  const state = analysisState(capture.data);
  return (
    <>
      <ProgressView state={state} label={name} />
      {state.kind === "done" && (
        <Link className="upload-tray__open" to={`/captures/${captureId}`}>
          Open the diagnosis →
        </Link>
      )}
    </>
  );
}

export type { UploadEntry };
