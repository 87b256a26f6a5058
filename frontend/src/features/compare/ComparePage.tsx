// Before and after: two captures of the same transfer, what changed in the cause and in the time,
// BEFORE's prediction next to what AFTER measured, and both transfers' sequence graphs on one
// time axis. `/compare?before=ID&after=ID`; either may be missing (then the picker asks for it).

import { Link, useSearchParams } from "react-router";
import { useCaptureList } from "../../api/captures";
import { useComparison } from "../../api/compare";
import { errorMessage } from "../../api/http";
import type { Capture, ComparedTransfer, Comparison } from "../../api/types";
import { Skeleton } from "../../app/Skeleton";
import { useCurrentWorkspace } from "../../app/workspace";
import { formatBitRate, formatBytes, formatDuration } from "../../format/units";
import { TransferGraphs } from "./TransferGraphs";
import "./compare.css";

export function ComparePage() {
  const [params, setParams] = useSearchParams();
  const before = params.get("before");
  const after = params.get("after");
  const workspace = useCurrentWorkspace();
  // The pickers offer the newest 200 analysed captures (one page of the list).
  const list = useCaptureList(workspace?.id, { limit: 200 });
  const done = (list.data?.items ?? []).filter((c) => c.status === "done");
  const comparison = useComparison(before, after);

  const choose = (side: "before" | "after", id: string) => {
    const next = new URLSearchParams(params);
    if (id) next.set(side, id);
    else next.delete(side);
    setParams(next, { replace: true });
  };

  return (
    <div className="compare-page">
      <header className="page-header">
        <div>
          <h1 className="page-title">Before and after</h1>
          <p className="muted">
            Two captures of the same transfer, before and after a change: what happened to the
            cause, how much faster it got, and whether the prediction held.
          </p>
        </div>
      </header>
      <div className="compare-pickers">
        <CapturePicker
          label="Before"
          value={before}
          captures={done}
          onChange={(id) => choose("before", id)}
        />
        <span className="compare-pickers__arrow" aria-hidden="true">
          →
        </span>
        <CapturePicker
          label="After"
          value={after}
          captures={done}
          onChange={(id) => choose("after", id)}
        />
      </div>
      {before === null || after === null ? (
        <p className="muted">Pick the capture made before the change and the one made after it.</p>
      ) : before === after ? (
        <p className="muted">Pick two different captures.</p>
      ) : comparison.isPending ? (
        <Skeleton className="skeleton--table" label="Comparing" />
      ) : comparison.isError ? (
        <div className="panel panel--error" role="alert" data-testid="compare-error">
          {errorMessage(comparison.error)}
        </div>
      ) : (
        <ComparisonView comparison={comparison.data} before={before} after={after} />
      )}
    </div>
  );
}

function CapturePicker({
  label,
  value,
  captures,
  onChange,
}: {
  label: string;
  value: string | null;
  captures: readonly Capture[];
  onChange: (id: string) => void;
}) {
  const known = value === null || captures.some((c) => c.id === value);
  return (
    <label className="compare-picker">
      <span className="compare-picker__label">{label}</span>
      <select className="input" value={value ?? ""} onChange={(e) => onChange(e.target.value)}>
        <option value="">Choose a capture…</option>
        {!known && value !== null && <option value={value}>{value}</option>}
        {captures.map((c) => (
          <option key={c.id} value={c.id}>
            {c.filename} — {new Date(c.created_at).toLocaleString()}
          </option>
        ))}
      </select>
    </label>
  );
}

function speedWords(speedup: number): { text: string; worse: boolean } {
  if (speedup >= 1) return { text: `${speedup.toFixed(1)}× faster`, worse: false };
  if (speedup > 0) return { text: `${(1 / speedup).toFixed(1)}× slower`, worse: true };
  return { text: "no time measured", worse: false };
}

function ComparisonView({
  comparison,
  before,
  after,
}: {
  comparison: Comparison;
  before: string;
  after: string;
}) {
  const speed = speedWords(comparison.speedup);
  return (
    <>
      <section className={`panel compare-verdict${speed.worse ? " compare-verdict--worse" : ""}`}>
        <p className="compare-verdict__speed num" data-testid="compare-speedup">
          {speed.text}
        </p>
        <p className="compare-verdict__summary">{comparison.summary}</p>
      </section>

      <section className="section" aria-labelledby="compare-findings-title">
        <h2 id="compare-findings-title" className="section-title">
          Findings
        </h2>
        {comparison.findings.length === 0 ? (
          <p className="muted">Neither capture has a problem finding (high or medium).</p>
        ) : (
          <ul className="compare-findings">
            {comparison.findings.map((f) => {
              const side = f.before ?? f.after;
              return (
                <li
                  key={`${f.code}|${f.server}`}
                  className={`compare-finding compare-finding--${f.status}`}
                  data-code={f.code}
                  data-status={f.status}
                >
                  <span className={`pill compare-status compare-status--${f.status}`}>
                    {f.status === "new" ? "new — regression" : f.status}
                  </span>
                  <span className="compare-finding__title">{side?.title ?? f.code}</span>
                  <span className="muted compare-finding__server">{f.server}</span>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section className="section" aria-labelledby="compare-transfers-title">
        <h2 id="compare-transfers-title" className="section-title">
          Transfers
        </h2>
        <div className="table-scroll">
          <table className="table" data-testid="compare-transfers">
            <thead>
              <tr>
                <th scope="col">Server</th>
                {NUMBER_COLUMNS.map((name) => (
                  <th key={name} scope="col" className="num">
                    {name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {comparison.transfers.map((t) => (
                <TransferRow key={t.server} transfer={t} />
              ))}
            </tbody>
          </table>
        </div>
        {comparison.transfers.flatMap((t) =>
          t.predictions.map((p) => (
            <p key={`${t.server}|${p.code}`} className="finding__fix compare-prediction">
              <span className="finding__fix-label">Prediction</span>
              <span>
                Fixing <code>{p.code}</code> was predicted to take {formatDuration(p.duration_s)},
                after the change it took {formatDuration(t.after_s)}.{" "}
                <span className="muted">{p.basis}</span>
              </span>
            </p>
          )),
        )}
      </section>

      <section className="section" aria-labelledby="compare-graphs-title">
        <h2 id="compare-graphs-title" className="section-title">
          Sequence over time
        </h2>
        <p className="muted">
          Each transfer's data from its start (first DNS query or SYN) on one time axis, every
          connection's bytes after the previous one's: the steeper, the faster.{" "}
          <Link to={`/captures/${before}`}>Open before</Link> ·{" "}
          <Link to={`/captures/${after}`}>Open after</Link>
        </p>
        {comparison.transfers.map((t) => (
          <TransferGraphs key={t.server} before={before} after={after} transfer={t} />
        ))}
      </section>
    </>
  );
}

// The transfers table's columns after Server, one per cell of `TransferRow`.
const NUMBER_COLUMNS = ["Size", "Connections", "Before", "After", "Change", "Predicted"] as const;

function TransferRow({ transfer: t }: { transfer: ComparedTransfer }) {
  const speed = speedWords(t.speedup);
  const predicted = t.predictions[0];
  return (
    <tr>
      <td>{t.server}</td>
      <td className="num">{formatBytes(t.bytes)}</td>
      <td className="num">
        {t.before_connections} → {t.after_connections}
      </td>
      <td className="num">
        {formatDuration(t.before_s)}
        <span className="muted"> · {formatBitRate(t.before_rate_bps)}</span>
      </td>
      <td className="num">
        {formatDuration(t.after_s)}
        <span className="muted"> · {formatBitRate(t.after_rate_bps)}</span>
      </td>
      <td className={`num${speed.worse ? " compare-worse" : " compare-better"}`}>{speed.text}</td>
      <td className="num">{predicted ? formatDuration(predicted.duration_s) : "–"}</td>
    </tr>
  );
}
