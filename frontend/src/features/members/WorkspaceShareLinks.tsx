import { Link } from "react-router";
import { errorMessage } from "../../api/http";
import { useRevokeWorkspaceShareLink, useWorkspaceShareLinks } from "../../api/shares";
import type { Workspace } from "../../api/types";
import { Skeleton } from "../../app/Skeleton";
import { linkState } from "../share/ShareDialog";

/**
 * Every share link to the workspace's captures, for its owners to review: which capture, who
 * made it and when, until when, whether it serves the file too; active ones can be revoked.
 * Links belong to the workspace: a removed member's links are revoked with the membership.
 */
export function WorkspaceShareLinks({ workspace }: { workspace: Workspace }) {
  const links = useWorkspaceShareLinks(workspace.id);
  const revoke = useRevokeWorkspaceShareLink(workspace.id);

  return (
    <section aria-labelledby="share-links-title">
      <h2 id="share-links-title" className="section-title">
        Share links
      </h2>
      <p className="muted">
        Links that open a capture of this workspace without an account, made by any member.
      </p>
      {revoke.isError && (
        <p className="form-error" role="alert">
          {errorMessage(revoke.error)}
        </p>
      )}
      {links.isPending ? (
        <Skeleton className="skeleton--table-small" label="Loading share links" />
      ) : links.isError ? (
        <p className="form-error">{errorMessage(links.error)}</p>
      ) : links.data.length === 0 ? (
        <p className="muted">No capture of this workspace has been shared.</p>
      ) : (
        <table className="table" aria-label="Share links of this workspace">
          <thead>
            <tr>
              <th scope="col">Capture</th>
              <th scope="col">Created by</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Opens</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.data.map((link) => {
              const state = linkState(link);
              return (
                <tr key={link.id}>
                  <td>
                    <Link to={`/captures/${link.capture_id}`}>{link.filename}</Link>
                  </td>
                  <td>{link.created_by ?? "a former member"}</td>
                  <td className="num">{new Date(link.created_at).toLocaleString()}</td>
                  <td className="num">
                    {link.expires_at ? new Date(link.expires_at).toLocaleString() : "never"}
                  </td>
                  <td>{link.allow_download ? "analysis + file" : "analysis only"}</td>
                  <td>{state}</td>
                  <td className="table__actions">
                    {state === "active" && (
                      <button
                        type="button"
                        className="button button--danger button--small"
                        aria-label={`Revoke this link to ${link.filename}`}
                        disabled={revoke.isPending}
                        onClick={() => revoke.mutate(link)}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
