import { useId, useState } from "react";
import { useNavigate } from "react-router";
import { errorMessage } from "../../api/http";
import { useChangePassword, useSession, useSignOutEverywhere } from "../../api/session";
import { TextField } from "../../app/TextField";

/** The signed-in user's account: change the password (other sessions end), sign out everywhere. */
export function AccountPage() {
  const session = useSession();
  const change = useChangePassword();
  const everywhere = useSignOutEverywhere();
  const navigate = useNavigate();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const passwordTitle = useId();
  const everywhereTitle = useId();

  return (
    <div className="settings-page">
      <header className="page-header">
        <div>
          <h1 className="page-title">Your account</h1>
          <p className="muted">
            Signed in as <strong>{session.data?.user.email ?? "–"}</strong>.
          </p>
        </div>
      </header>

      <section className="panel account-section" aria-labelledby={passwordTitle}>
        <h2 id={passwordTitle} className="section-title">
          Change password
        </h2>
        <form
          className="stacked-form"
          onSubmit={(event) => {
            event.preventDefault();
            change.mutate(
              { current_password: current, new_password: next },
              {
                onSuccess: () => {
                  setCurrent("");
                  setNext("");
                },
              },
            );
          }}
        >
          <TextField
            label="Current password"
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onValue={setCurrent}
          />
          <TextField
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            minLength={12}
            hint="12 characters or more, not a common or breached password. A few unrelated words make a good one; no digits or symbols are required."
            value={next}
            onValue={setNext}
          />
          {change.isError && (
            <p className="form-error" role="alert">
              {errorMessage(change.error)}
            </p>
          )}
          {change.isSuccess && (
            <p className="form-success" role="status">
              Password changed. Every other session has been signed out.
            </p>
          )}
          <button type="submit" className="button button--primary" disabled={change.isPending}>
            Change password
          </button>
        </form>
      </section>

      <section className="panel account-section" aria-labelledby={everywhereTitle}>
        <h2 id={everywhereTitle} className="section-title">
          Sign out everywhere
        </h2>
        <p className="muted">
          Ends every session of your account, in this browser and all others. API tokens keep
          working until you revoke them on the API tokens page.
        </p>
        {everywhere.isError && (
          <p className="form-error" role="alert">
            {errorMessage(everywhere.error)}
          </p>
        )}
        <button
          type="button"
          className="button button--danger"
          disabled={everywhere.isPending}
          onClick={() => everywhere.mutate(undefined, { onSuccess: () => navigate("/login") })}
        >
          Sign out everywhere
        </button>
      </section>
    </div>
  );
}
