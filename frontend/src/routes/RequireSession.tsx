import { Navigate, Outlet, useLocation } from "react-router";
import { useSession } from "../api/session";
import { Skeleton } from "../app/Skeleton";

/** Pages behind sign-in: without a session, go to /login and come back afterwards. */
export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  if (session.isPending) return <Skeleton className="skeleton--page" label="Loading" />;
  if (!session.data) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }
  return <Outlet />;
}
