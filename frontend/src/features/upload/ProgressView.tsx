import { formatByteRate, formatBytes, formatDuration, formatPercent } from "../../format/units";
import type { ProgressState } from "./progressState";
import { stageLabel } from "./progressState";
import { secondsLeft } from "./transferRate";

/** A fixed-height progress block: the bar never changes the layout as states follow each other. */
export function ProgressView({ state, label }: { state: ProgressState; label: string }) {
  switch (state.kind) {
    case "uploading": {
      const fraction = state.total > 0 ? state.loaded / state.total : 0;
      const left = secondsLeft(state.loaded, state.total, state.bytesPerSecond);
      return (
        <div className="progress" data-state="uploading">
          <Bar label={`Uploading ${label}`} fraction={fraction} />
          <p className="progress__line">
            <span>Uploading</span>
            <span className="num">
              {formatBytes(state.loaded)} of {formatBytes(state.total)}
            </span>
            {state.bytesPerSecond !== null && (
              <span className="num">{formatByteRate(state.bytesPerSecond)}</span>
            )}
            {left !== null && <span className="num">{formatDuration(left)} left</span>}
          </p>
        </div>
      );
    }
    case "queued":
      return (
        <div className="progress" data-state="queued">
          <Bar label={`Waiting to analyse ${label}`} fraction={null} />
          <p className="progress__line">
            <span>Uploaded · waiting for an analysis worker</span>
          </p>
        </div>
      );
    case "analysing":
      return (
        <div className="progress" data-state="analysing">
          <Bar label={`Analysing ${label}`} fraction={state.fraction} />
          <p className="progress__line">
            <span>{stageLabel(state.stage)}</span>
            {state.fraction !== null && (
              <span className="num">{formatPercent(state.fraction)}</span>
            )}
          </p>
        </div>
      );
    case "done":
      return (
        <div className="progress" data-state="done">
          <Bar label={`Analysed ${label}`} fraction={1} />
          <p className="progress__line">
            <span>Analysis complete</span>
          </p>
        </div>
      );
    case "failed":
      return (
        <div className="progress progress--failed" data-state="failed" role="alert">
          <p className="progress__title">{state.title}</p>
          <p className="progress__message">{state.message}</p>
          {state.hint && <p className="progress__hint">{state.hint}</p>}
        </div>
      );
  }
}

/** Determinate when the fraction is known, otherwise an indeterminate (animated) bar. */
function Bar({ label, fraction }: { label: string; fraction: number | null }) {
  const percent = fraction === null ? undefined : Math.round(fraction * 100);
  return (
    <div
      className="progress__bar"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
      data-indeterminate={fraction === null || undefined}
    >
      <div
        className="progress__fill"
        style={percent === undefined ? undefined : { width: `${percent}%` }}
      />
    </div>
  );
}
