import { useState } from "react";
import { Link } from "react-router";
import type { CaptureScope } from "../../api/scope";
import type { Capture } from "../../api/types";
import { Fact } from "../../app/Fact";
import { formatBytes, formatDuration } from "../../format/units";
import { ShareDialog } from "../share/ShareDialog";
import { numberFact, warningsOf } from "./captureFacts";

/** The capture's name and facts, and what one can do with it (share, download). */
export function CaptureHeader({ scope, capture }: { scope: CaptureScope; capture: Capture }) {
  const [sharing, setSharing] = useState(false);
  const packets = numberFact(capture, "packets");
  const duration = numberFact(capture, "duration_s");
  const warnings = warningsOf(capture);
  const fileHref =
    scope.kind === "capture"
      ? `/api/v1/captures/${capture.id}/file`
      : `/api/v1/shared/${encodeURIComponent(scope.token)}/file`;
  const format = [capture.format, capture.compression].filter(Boolean).join(" + ");

  return (
    <header className="capture-header">
      <div className="capture-header__main">
        <h1 className="capture-header__title">{capture.filename}</h1>
        <dl className="facts">
          <Fact label="Size" value={formatBytes(capture.size_bytes)} />
          {format && <Fact label="Format" value={format} />}
          {packets !== null && <Fact label="Packets" value={packets.toLocaleString("en")} />}
          {duration !== null && <Fact label="Duration" value={formatDuration(duration)} />}
          <Fact label="Uploaded" value={new Date(capture.created_at).toLocaleString()} />
        </dl>
        {warnings.length > 0 && (
          <ul className="capture-header__warnings">
            {warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        )}
      </div>
      <div className="capture-header__actions">
        {capture.download_allowed && (
          <a className="button" href={fileHref} download={capture.filename}>
            Download
          </a>
        )}
        {scope.kind === "capture" && capture.status === "done" && (
          <Link className="button" to={`/compare?after=${encodeURIComponent(capture.id)}`}>
            Compare with…
          </Link>
        )}
        {scope.kind === "capture" && (
          <button type="button" className="button button--primary" onClick={() => setSharing(true)}>
            Share
          </button>
        )}
      </div>
      {sharing && scope.kind === "capture" && (
        <ShareDialog captureId={capture.id} onClose={() => setSharing(false)} />
      )}
    </header>
  );
}
