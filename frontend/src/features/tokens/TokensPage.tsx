import { useId, useState } from "react";
import { errorMessage } from "../../api/http";
import { useApiTokens, useCreateApiToken, useRevokeApiToken } from "../../api/tokens";
import type { TokenScope } from "../../api/types";
import { CopyField } from "../../app/CopyField";
import { ActionsHeader, DangerButton } from "../../app/RowActions";
import { Skeleton } from "../../app/Skeleton";
import { useCurrentWorkspace } from "../../app/workspace";

/** What each scope lets a token do (the API's TokenCreate.scopes), in the order offered. */
const SCOPE_CHOICES: readonly { scope: TokenScope; label: string }[] = [
  { scope: "captures:read", label: "Read captures and their analyses" },
  { scope: "captures:write", label: "Upload, delete and share captures" },
  { scope: "admin", label: "Manage API tokens and members (admin)" },
];
const DEFAULT_SCOPES: readonly TokenScope[] = ["captures:read", "captures:write"];

/** API tokens for scripts and CI: create (the secret is shown once), see when used, revoke. */
export function TokensPage() {
  const workspace = useCurrentWorkspace();
  const tokens = useApiTokens();
  const create = useCreateApiToken();
  const revoke = useRevokeApiToken();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<readonly TokenScope[]>(DEFAULT_SCOPES);
  const nameId = useId();
  const origin = window.location.origin;
  const secret = create.data?.token;

  return (
    <div className="settings-page">
      <header className="page-header">
        <div>
          <h1 className="page-title">API tokens</h1>
          <p className="muted">
            Upload captures from scripts and CI. A token acts for you in the workspace{" "}
            <strong>{workspace?.name ?? "–"}</strong>; revoke it when it is no longer needed.
          </p>
        </div>
      </header>

      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (!workspace) return;
          create.mutate(
            {
              name: name.trim() || "token",
              workspace_id: workspace.id,
              scopes: SCOPE_CHOICES.map((c) => c.scope).filter((s) => scopes.includes(s)),
            },
            { onSuccess: () => setName("") },
          );
        }}
      >
        <label className="field__label" htmlFor={nameId}>
          Token name
        </label>
        <input
          id={nameId}
          className="input"
          placeholder="e.g. ci-nightly"
          maxLength={200}
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
        />
        <button
          type="submit"
          className="button button--primary"
          disabled={create.isPending || !workspace || scopes.length === 0}
        >
          Create token
        </button>
        <fieldset className="scope-choices">
          <legend className="field__label">The token may</legend>
          {SCOPE_CHOICES.map(({ scope, label }) => (
            <label key={scope} className="scope-choice">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setScopes((now) => (on ? [...now, scope] : now.filter((s) => s !== scope)));
                }}
              />
              {label}
            </label>
          ))}
        </fieldset>
      </form>
      {create.isError && (
        <p className="form-error" role="alert">
          {errorMessage(create.error)}
        </p>
      )}

      {secret && (
        <div className="panel panel--highlight token-issued">
          <p className="token-issued__note">
            Copy the token now: it is shown only once and stored only as a hash.
          </p>
          <CopyField label="Your new token" value={secret} />
          <CopyField
            label="Upload with curl"
            multiline
            value={`curl -H "Authorization: Bearer ${secret}" \\\n  -F file=@slow.pcap ${origin}/api/v1/captures`}
          />
          <CopyField
            label="Upload with the tcplens CLI and wait for the findings"
            multiline
            value={`export TCPLENS_TOKEN=${secret}\ntcplens upload slow.pcap --server ${origin} --wait`}
          />
        </div>
      )}

      <h2 className="section-title">Your tokens</h2>
      {tokens.isPending ? (
        <Skeleton className="skeleton--table-small" label="Loading tokens" />
      ) : tokens.isError ? (
        <p className="form-error">{errorMessage(tokens.error)}</p>
      ) : tokens.data.length === 0 ? (
        <p className="muted">No tokens yet.</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Scopes</th>
              <th scope="col" className="num">
                Created
              </th>
              <th scope="col" className="num">
                Last used
              </th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((token) => (
              <tr key={token.id} className={token.revoked_at ? "row--revoked" : undefined}>
                <td>{token.name}</td>
                <td className="mono">{token.display_prefix}…</td>
                <td>{token.scopes.join(", ")}</td>
                <td className="num">{new Date(token.created_at).toLocaleDateString()}</td>
                <td className="num">
                  {token.last_used_at ? new Date(token.last_used_at).toLocaleString() : "never"}
                </td>
                <td className="table__actions">
                  {token.revoked_at ? (
                    <span className="pill pill--failed">revoked</span>
                  ) : (
                    <DangerButton
                      label={`Revoke ${token.name}`}
                      disabled={revoke.isPending}
                      onClick={() => revoke.mutate(token.id)}
                    >
                      Revoke
                    </DangerButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
