import { Link } from "react-router";
import { useSession } from "../../api/session";
import type { ShareLinkProblem } from "./shareLinkProblem";

const WORDS: Readonly<Record<ShareLinkProblem, { title: string; text: string }>> = {
  revoked: {
    title: "This share link was revoked",
    text: "The person who shared this capture has withdrawn the link. Ask them for a new one if you still need it.",
  },
  expired: {
    title: "This share link has expired",
    text: "Share links work for a limited time, and this one's has passed. Ask the person who shared it for a new link.",
  },
  unknown: {
    title: "This share link does not open anything",
    text: "It may have been mistyped or cut short, or the capture was deleted. Check the address, or ask the person who shared it for a new link.",
  },
};

/**
 * What someone holding a dead share link sees. Only a signed-in person is offered their captures:
 * most visitors of a share link have no account here.
 */
export function ShareLinkUnavailable({ problem }: { problem: ShareLinkProblem }) {
  const session = useSession();
  const words = WORDS[problem];
  return (
    <section
      className="empty-state"
      aria-labelledby="share-unavailable-title"
      data-share-problem={problem}
    >
      <h1 id="share-unavailable-title" className="empty-state__title">
        {words.title}
      </h1>
      <p className="muted">{words.text}</p>
      {session.data ? (
        <Link className="button" to="/">
          Go to your captures
        </Link>
      ) : null}
    </section>
  );
}
