import { Link } from "react-router";
import type { CaptureScope } from "../../api/scope";
import type { Confidence, Finding } from "../../api/types";
import { factorLabel, formatBitRate, formatDuration } from "../../format/units";
import { capturePointNote, confidenceNotes } from "./confidenceNotes";
import { findingLinks } from "./findingLinks";

/** How many findings are shown in full before "show the rest". */
const TOP = 3;

/** The answer to "why was it slow": the findings as sentences with their numbers and fix. */
export function Diagnosis({
  scope,
  findings,
  showAll,
  onShowAll,
}: {
  scope: CaptureScope;
  findings: readonly Finding[];
  showAll: boolean;
  onShowAll: () => void;
}) {
  if (findings.length === 0) {
    return (
      <section className="diagnosis diagnosis--clear" aria-labelledby="diagnosis-title">
        <h2 id="diagnosis-title" className="section-title">
          Diagnosis
        </h2>
        <p className="diagnosis__none">
          No finding: none of the situations tcplens recognises (receiver or sender window limits,
          loss, slow readers, DNS waits, connection setup, stop-and-wait, Nagle) held these
          connections back.
        </p>
      </section>
    );
  }
  const shown = showAll ? findings : findings.slice(0, TOP);
  return (
    <section className="diagnosis" aria-labelledby="diagnosis-title">
      <h2 id="diagnosis-title" className="section-title">
        Diagnosis
      </h2>
      <ol className="findings">
        {shown.map((finding) => (
          <FindingCard key={finding.rank} scope={scope} finding={finding} />
        ))}
      </ol>
      {!showAll && findings.length > TOP && (
        <button type="button" className="button button--quiet" onClick={onShowAll}>
          Show {findings.length - TOP} more finding{findings.length - TOP === 1 ? "" : "s"}
        </button>
      )}
    </section>
  );
}

function FindingCard({ scope, finding }: { scope: CaptureScope; finding: Finding }) {
  const links = findingLinks(scope, finding);
  return (
    <li className={`finding finding--${finding.severity}`} data-code={finding.code}>
      <div className="finding__head">
        <span className={`severity severity--${finding.severity}`}>{finding.severity}</span>
        {finding.factor && <span className="finding__factor">{factorLabel(finding.factor)}</span>}
        {finding.time_lost_s !== null && finding.time_lost_s > 0 && (
          <span className="finding__lost num">{formatDuration(finding.time_lost_s)} lost</span>
        )}
      </div>
      <h3 className="finding__title">{finding.title}</h3>
      <p className="finding__summary">{finding.summary}</p>
      {finding.fix && (
        <p className="finding__fix">
          <span className="finding__fix-label">Fix</span>
          {finding.fix}
        </p>
      )}
      {finding.if_fixed && (
        <p className="finding__fix finding__if-fixed" data-testid="if-fixed">
          <span className="finding__fix-label">If fixed</span>
          <span>
            <strong className="num">
              ≈ {formatDuration(finding.if_fixed.duration_s)} at{" "}
              {formatBitRate(finding.if_fixed.rate_bps)}
            </strong>
            {" — "}
            {finding.if_fixed.basis}
          </span>
        </p>
      )}
      {finding.evidence.confidence && <ConfidenceNotes confidence={finding.evidence.confidence} />}
      {links.length > 0 && (
        <p className="finding__links">
          <span className="finding__links-label">Evidence</span>
          {links.slice(0, 8).map((link) => (
            <Link key={link.flowId} className="chip" to={link.href}>
              flow {link.flowId}
              {link.fromS !== undefined && link.toS !== undefined && (
                <span className="chip__range num">
                  {formatDuration(link.fromS)} – {formatDuration(link.toS)}
                </span>
              )}
            </Link>
          ))}
          {links.length > 8 && (
            <span className="finding__more">+{links.length - 8} more flows</span>
          )}
        </p>
      )}
    </li>
  );
}

/** What the capture could not see of the finding's flows (its confidence inputs). */
function ConfidenceNotes({ confidence }: { confidence: Confidence }) {
  const notes = confidenceNotes(confidence);
  return (
    <div className="finding__confidence" data-testid="confidence">
      <span className="finding__fix-label">Capture</span>
      <ul>
        <li>{capturePointNote(confidence)}</li>
        {notes.map((note) => (
          <li key={note}>{note}</li>
        ))}
      </ul>
    </div>
  );
}
