import { useState } from "react";
import { Link, Navigate, useNavigate, useSearchParams } from "react-router";
import { useSession, useSignIn } from "../../api/session";
import { TextField } from "../../app/TextField";
import { signInProblem } from "./signInProblem";

/** Where to go after signing in: only a path on this site (never an open redirect). */
function safeNext(next: string | null): string {
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/";
}

/** The way in: what tcplens is (a sentence and a picture of a diagnosed capture), then the form. */
export function AuthPage({ mode }: { mode: "login" | "signup" }) {
  const session = useSession();
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));

  if (session.data) return <Navigate to={next} replace />;

  return (
    <div className="landing">
      <section className="landing__intro" aria-labelledby="landing-title">
        <h1 id="landing-title" className="landing__title">
          Why was this TCP transfer slow?
        </h1>
        <p className="landing__sentence">
          tcplens reads a packet capture (pcap or pcapng) and tells you what held each TCP transfer
          back — a receiver window too small, packet loss, a slow application, the path itself —
          with the numbers that prove it and the change that fixes it.
        </p>
        <figure className="landing__figure">
          <img
            src="/landing-diagnosis.webp"
            width={1200}
            height={694}
            alt="A capture diagnosed by tcplens: its findings, most important first, each with the time it cost and what to change, above every connection on a timeline"
          />
          <figcaption className="muted">A capture diagnosed by tcplens.</figcaption>
        </figure>
      </section>
      <AuthCard mode={mode} />
    </div>
  );
}

function AuthCard({ mode }: { mode: "login" | "signup" }) {
  const signIn = useSignIn(mode);
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const isLogin = mode === "login";

  return (
    <section className="auth-card" aria-labelledby="auth-title">
      <h2 id="auth-title" className="auth-card__title">
        {isLogin ? "Sign in to tcplens" : "Create your tcplens account"}
      </h2>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          signIn.mutate(
            { email, password },
            { onSuccess: () => navigate(next, { replace: true }) },
          );
        }}
      >
        <TextField
          label="E-mail"
          type="email"
          autoComplete="email"
          required
          value={email}
          onValue={setEmail}
        />
        <TextField
          label="Password"
          type="password"
          autoComplete={isLogin ? "current-password" : "new-password"}
          required
          minLength={isLogin ? undefined : 12}
          value={password}
          onValue={setPassword}
        />
        {signIn.isError && (
          <p className="form-error" role="alert">
            {signInProblem(mode, signIn.error)}
          </p>
        )}
        <button
          type="submit"
          className="button button--primary button--wide"
          disabled={signIn.isPending}
        >
          {isLogin ? "Sign in" : "Create account"}
        </button>
      </form>
      <p className="auth-card__switch">
        {isLogin ? (
          <>
            New here? <Link to={`/signup?next=${encodeURIComponent(next)}`}>Create an account</Link>
          </>
        ) : (
          <>
            Have an account? <Link to={`/login?next=${encodeURIComponent(next)}`}>Sign in</Link>
          </>
        )}
      </p>
    </section>
  );
}
