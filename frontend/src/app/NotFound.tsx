import { Link } from "react-router";

/**
 * The same answer for "does not exist" and "not yours": the API answers 404 for another
 * workspace's capture, and the page must not hint otherwise.
 */
export function NotFound({ what = "page" }: { what?: string }) {
  return (
    <section className="empty-state" aria-labelledby="not-found-title">
      <h1 id="not-found-title" className="empty-state__title">
        {what.charAt(0).toUpperCase() + what.slice(1)} not found
      </h1>
      <p className="muted">
        It does not exist, or it belongs to a workspace you are not a member of. If someone sent you
        this link, ask them for a share link.
      </p>
      <Link className="button" to="/">
        Go to your captures
      </Link>
    </section>
  );
}
