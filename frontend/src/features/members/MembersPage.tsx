import { useId, useState } from "react";
import { errorMessage } from "../../api/http";
import { useSession } from "../../api/session";
import type { Workspace } from "../../api/types";
import {
  useCancelInvitation,
  useInviteMember,
  useMembers,
  useRemoveMember,
} from "../../api/workspaces";
import { ActionsHeader, DangerButton } from "../../app/RowActions";
import { Skeleton } from "../../app/Skeleton";
import { useCurrentWorkspace } from "../../app/workspace";
import { WorkspaceShareLinks } from "./WorkspaceShareLinks";

/** Who can see this workspace's captures; owners invite people by e-mail address. */
export function MembersPage() {
  const workspace = useCurrentWorkspace();
  if (!workspace) return <Skeleton className="skeleton--table-small" label="Loading" />;
  return <Members workspace={workspace} />;
}

function Members({ workspace }: { workspace: Workspace }) {
  const session = useSession();
  const members = useMembers(workspace.id);
  const invite = useInviteMember(workspace.id);
  const remove = useRemoveMember(workspace.id);
  const cancel = useCancelInvitation(workspace.id);
  const [email, setEmail] = useState("");
  const emailId = useId();
  const isOwner = workspace.role === "owner";

  return (
    <div className="settings-page">
      <header className="page-header">
        <div>
          <h1 className="page-title">Members of {workspace.name}</h1>
          <p className="muted">
            Members see and upload every capture of this workspace. An invited address joins when
            its account next signs in (or when it signs up).
          </p>
        </div>
      </header>
      {isOwner && (
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            invite.mutate(email.trim(), { onSuccess: () => setEmail("") });
          }}
        >
          <label className="field__label" htmlFor={emailId}>
            Invite by e-mail
          </label>
          <input
            id={emailId}
            className="input"
            type="email"
            required
            placeholder="teammate@example.com"
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <button type="submit" className="button button--primary" disabled={invite.isPending}>
            Invite
          </button>
        </form>
      )}
      {invite.isError && (
        <p className="form-error" role="alert">
          {errorMessage(invite.error)}
        </p>
      )}
      {members.isPending ? (
        <Skeleton className="skeleton--table-small" label="Loading members" />
      ) : members.isError ? (
        <p className="form-error">{errorMessage(members.error)}</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {members.data.map((member) => (
              <tr key={member.user_id ?? `invited:${member.email}`}>
                <td>
                  {member.email}
                  {member.user_id === session.data?.user.id && (
                    <span className="muted"> (you)</span>
                  )}
                </td>
                <td>
                  {member.status === "invited" ? (
                    <span className="pill">invited</span>
                  ) : (
                    <span className={`pill pill--${member.role}`}>{member.role}</span>
                  )}
                </td>
                <td className="table__actions">
                  {isOwner && member.user_id === null && (
                    <DangerButton
                      label={`Cancel the invitation of ${member.email}`}
                      disabled={cancel.isPending}
                      onClick={() => cancel.mutate(member.email)}
                    >
                      Cancel
                    </DangerButton>
                  )}
                  {isOwner && member.user_id && member.user_id !== session.data?.user.id && (
                    <DangerButton
                      label={`Remove ${member.email}`}
                      disabled={remove.isPending}
                      onClick={() => member.user_id && remove.mutate(member.user_id)}
                    >
                      Remove
                    </DangerButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {isOwner && <WorkspaceShareLinks workspace={workspace} />}
    </div>
  );
}
