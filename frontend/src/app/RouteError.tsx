import { Link, useRouteError } from "react-router";

/** What a page shows if it fails to render: a sentence and a way out, never a blank screen. */
export function RouteError() {
  const error = useRouteError();
  const detail = error instanceof Error ? error.message : String(error);
  return (
    <main className="page">
      <section className="empty-state" role="alert">
        <h1 className="empty-state__title">This page failed to display</h1>
        <p className="muted">
          Something in the data was not what the page expected. Reloading may help; if it does not,
          the message below tells the tcplens developers where to look.
        </p>
        <pre className="route-error__detail">{detail}</pre>
        <Link className="button" to="/">
          Go to your captures
        </Link>
      </section>
    </main>
  );
}
