import { errorMessage } from "../../api/http";
import { useRevokeWorkspaceShareLink, useWorkspaceShareLinks } from "../../api/shares";
import type { Workspace } from "../../api/types";
import { Skeleton } from "../../app/Skeleton";
import { ShareLinksTable } from "../share/ShareLinksTable";

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
        <ShareLinksTable
          links={links.data}
          filename={(link) => link.filename}
          label="Share links of this workspace"
          className="table"
          revoking={revoke.isPending}
          onRevoke={(link) => revoke.mutate(link)}
        />
      )}
    </section>
  );
}
