import { useId, useState } from "react";
import { errorMessage } from "../../api/http";
import { useCreateShareLink, useRevokeShareLink, useShareLinks } from "../../api/shares";
import type { ShareLink } from "../../api/types";
import { CopyField } from "../../app/CopyField";
import { Dialog } from "../../app/Dialog";
import { ShareLinksTable } from "./ShareLinksTable";

const EXPIRY_CHOICES: readonly { label: string; seconds: number | null }[] = [
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 7 * 86_400 },
  { label: "30 days", seconds: 30 * 86_400 },
  { label: "Never (until revoked)", seconds: null },
];

/** Create a read-only link to this capture, copy it, and revoke links made earlier. */
export function ShareDialog({ captureId, onClose }: { captureId: string; onClose: () => void }) {
  const links = useShareLinks(captureId);
  const create = useCreateShareLink(captureId);
  const revoke = useRevokeShareLink(captureId);
  const [expiry, setExpiry] = useState(1);
  const [allowDownload, setAllowDownload] = useState(false);
  const expiryId = useId();
  const downloadId = useId();
  const issued = create.data;

  return (
    <Dialog title="Share this analysis" onClose={onClose}>
      <p className="muted">
        Anyone with the link sees this capture's diagnosis, flows and graphs, read-only, without
        signing in. Nothing else in your workspace.
      </p>
      <form
        className="share-form"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({
            expires_in_s: EXPIRY_CHOICES[expiry]?.seconds ?? null,
            allow_download: allowDownload,
          });
        }}
      >
        <label className="share-form__check" htmlFor={downloadId}>
          <input
            id={downloadId}
            type="checkbox"
            checked={allowDownload}
            onChange={(e) => setAllowDownload(e.currentTarget.checked)}
          />{" "}
          Also let them download the capture file (every packet, payloads included)
        </label>
        <p className="muted" data-testid="share-access">
          {allowDownload
            ? "The link opens the analysis and the capture file."
            : "The link opens the analysis only: the capture file cannot be downloaded with it."}
        </p>
        <label className="field__label" htmlFor={expiryId}>
          Link expires after
        </label>
        <div className="share-form__row">
          <select
            id={expiryId}
            className="input"
            value={expiry}
            onChange={(e) => setExpiry(Number(e.currentTarget.value))}
          >
            {EXPIRY_CHOICES.map((choice, index) => (
              <option key={choice.label} value={index}>
                {choice.label}
              </option>
            ))}
          </select>
          <button type="submit" className="button button--primary" disabled={create.isPending}>
            Create link
          </button>
        </div>
      </form>
      {create.isError && (
        <p className="form-error" role="alert">
          {errorMessage(create.error)}
        </p>
      )}
      {issued && (
        <div className="share-issued">
          <CopyField label="Share link (shown once — copy it now)" value={issued.url} />
          <p className="muted">{accessOf(issued)}</p>
        </div>
      )}
      <h3 className="subhead">Links to this capture</h3>
      {links.isPending ? (
        <p className="muted">Loading…</p>
      ) : links.isError ? (
        <p className="form-error">{errorMessage(links.error)}</p>
      ) : links.data.length === 0 ? (
        <p className="muted">No links yet.</p>
      ) : (
        <ShareLinksTable
          links={links.data}
          className="table table--compact"
          revoking={revoke.isPending}
          onRevoke={(link) => revoke.mutate(link.id)}
        />
      )}
    </Dialog>
  );
}

function accessOf(link: ShareLink): string {
  const until = link.expires_at
    ? `until ${new Date(link.expires_at).toLocaleString()}`
    : "until you revoke it";
  return link.allow_download
    ? `It opens the analysis and the capture file, ${until}.`
    : `It opens the analysis only (no file download), ${until}.`;
}
