import { Link } from "react-router";
import type { ShareLink } from "../../api/types";
import { ActionsHeader, DangerButton } from "../../app/RowActions";

/**
 * Share links as a table: who made each one and when, until when, whether it serves the file
 * too, its state, and a Revoke button while it is active. The share dialog lists one capture's
 * links; the workspace's owners see every link, with the capture each one opens (`filename`).
 */
export function ShareLinksTable<L extends ShareLink>({
  links,
  filename,
  label,
  className,
  revoking,
  onRevoke,
}: {
  links: readonly L[];
  /** The Capture column: the name of the capture a link opens (a link to it). */
  filename?: (link: L) => string;
  label?: string;
  className: string;
  revoking: boolean;
  onRevoke: (link: L) => void;
}) {
  return (
    <table className={className} aria-label={label}>
      <thead>
        <tr>
          {filename && <th scope="col">Capture</th>}
          <th scope="col">Created by</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Opens</th>
          <th scope="col">State</th>
          <ActionsHeader />
        </tr>
      </thead>
      <tbody>
        {links.map((link) => {
          const state = linkState(link);
          const name = filename?.(link);
          return (
            <tr key={link.id}>
              {name !== undefined && (
                <td>
                  <Link to={`/captures/${link.capture_id}`}>{name}</Link>
                </td>
              )}
              <td>{link.created_by ?? "a former member"}</td>
              <td className="num">{new Date(link.created_at).toLocaleString()}</td>
              <td className="num">
                {link.expires_at ? new Date(link.expires_at).toLocaleString() : "never"}
              </td>
              <td>{link.allow_download ? "analysis + file" : "analysis only"}</td>
              <td>{state}</td>
              <td className="table__actions">
                {state === "active" && (
                  <DangerButton
                    label={name === undefined ? undefined : `Revoke this link to ${name}`}
                    disabled={revoking}
                    onClick={() => onRevoke(link)}
                  >
                    Revoke
                  </DangerButton>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function linkState(link: ShareLink, now = Date.now()): "active" | "expired" | "revoked" {
  if (link.revoked_at) return "revoked";
  if (link.expires_at && Date.parse(link.expires_at) <= now) return "expired";
  return "active";
}
