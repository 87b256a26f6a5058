import { createBrowserRouter, Outlet } from "react-router";
import { AppShell, TopBar } from "../app/AppShell";
import { NotFound } from "../app/NotFound";
import { RouteError } from "../app/RouteError";
import { AccountPage } from "../features/account/AccountPage";
import { AuthPage } from "../features/auth/AuthPage";
import { CapturesPage } from "../features/captures/CapturesPage";
import { ComparePage } from "../features/compare/ComparePage";
import { HealthStatus } from "../features/health/HealthStatus";
import { MembersPage } from "../features/members/MembersPage";
import { CaptureOverview } from "../features/overview/CaptureOverview";
import { SharedBanner } from "../features/shared/SharedBanner";
import { TokensPage } from "../features/tokens/TokensPage";
import { FlowPageRoute } from "./FlowPageRoute";
import { RequireSession } from "./RequireSession";
import { useCaptureScope } from "./scopeRoutes";

function CaptureRoute() {
  const scope = useCaptureScope();
  return <CaptureOverview key={JSON.stringify(scope)} scope={scope} />;
}

/** The read-only pages of a share link: no sign-in, no uploads, a banner that says so. */
function SharedLayout() {
  return (
    <>
      <TopBar />
      <SharedBanner />
      <main className="page" id="main">
        <Outlet />
      </main>
    </>
  );
}

function BareLayout() {
  return (
    <>
      <TopBar />
      <main className="page page--landing" id="main">
        <Outlet />
      </main>
      <footer className="footer">
        <HealthStatus />
      </footer>
    </>
  );
}

export const routes = [
  {
    errorElement: <RouteError />,
    children: [
      {
        element: <BareLayout />,
        children: [
          { path: "/login", element: <AuthPage mode="login" /> },
          { path: "/signup", element: <AuthPage mode="signup" /> },
        ],
      },
      {
        element: <SharedLayout />,
        children: [
          { path: "/shared/:token", element: <CaptureRoute /> },
          { path: "/shared/:token/flows/:flowId", element: <FlowPageRoute /> },
        ],
      },
      {
        element: <RequireSession />,
        children: [
          {
            element: <AppShell />,
            children: [
              { path: "/", element: <CapturesPage /> },
              { path: "/captures/:captureId", element: <CaptureRoute /> },
              { path: "/compare", element: <ComparePage /> },
              { path: "/captures/:captureId/flows/:flowId", element: <FlowPageRoute /> },
              { path: "/settings/tokens", element: <TokensPage /> },
              { path: "/settings/members", element: <MembersPage /> },
              { path: "/settings/account", element: <AccountPage /> },
              { path: "*", element: <NotFound /> },
            ],
          },
        ],
      },
    ],
  },
];

export function makeRouter() {
  return createBrowserRouter(routes);
}
