import { NavLink, Outlet, useLocation, useNavigate } from "react-router";
import { useSession, useSignOut } from "../api/session";
import { DropZone } from "../features/upload/DropZone";
import { UploadsProvider } from "../features/upload/UploadsContext";
import { UploadTray } from "../features/upload/UploadTray";
import { ThemeToggle } from "./ThemeToggle";
import { useChooseWorkspace, useCurrentWorkspace } from "./workspace";

/** The signed-in app: top bar, the page, uploads (drop anywhere) and their tray. */
export function AppShell() {
  const workspace = useCurrentWorkspace();
  return (
    <UploadsProvider workspaceId={workspace?.id}>
      <DropZone>
        <TopBar />
        <main className="page" id="main">
          <Outlet />
        </main>
        <UploadTray />
      </DropZone>
    </UploadsProvider>
  );
}

export function TopBar({ children }: { children?: React.ReactNode }) {
  const session = useSession();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const workspace = useCurrentWorkspace();
  const chooseWorkspace = useChooseWorkspace();
  const { pathname } = useLocation();
  const onAuthPage = pathname === "/login" || pathname === "/signup";
  const user = session.data?.user;
  return (
    <header className="topbar">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <NavLink to="/" className="brand" aria-label="tcplens home">
        <Logo />
        <span className="brand__name">tcplens</span>
      </NavLink>
      {user && (
        <nav className="topbar__nav" aria-label="Main">
          <NavLink to="/" end className="topbar__link">
            Captures
          </NavLink>
          <NavLink to="/settings/tokens" className="topbar__link">
            API tokens
          </NavLink>
          <NavLink to="/settings/members" className="topbar__link">
            Members
          </NavLink>
        </nav>
      )}
      {children}
      <div className="topbar__right">
        {workspace && session.data && session.data.workspaces.length > 1 && (
          <select
            className="input topbar__workspace-select"
            aria-label="Workspace"
            value={workspace.id}
            onChange={(event) => chooseWorkspace(event.currentTarget.value)}
          >
            {session.data.workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        )}
        <ThemeToggle />
        {user ? (
          <>
            <NavLink
              to="/settings/account"
              className="topbar__user"
              title={`${user.email}: your account`}
            >
              {user.email}
            </NavLink>
            <button
              type="button"
              className="button button--quiet"
              onClick={() => signOut.mutate(undefined, { onSettled: () => navigate("/login") })}
            >
              Sign out
            </button>
          </>
        ) : (
          session.isSuccess &&
          !onAuthPage && (
            <NavLink to="/login" className="button button--quiet">
              Sign in
            </NavLink>
          )
        )}
      </div>
    </header>
  );
}

function Logo() {
  // A lens over a time-sequence trace: the product in one glyph.
  return (
    <svg className="brand__logo" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
      <path d="M3 19 L8 14 L11 15 L16 8 L21 5" fill="none" strokeWidth="2" />
      <circle cx="15" cy="10" r="5" fill="none" strokeWidth="2" />
    </svg>
  );
}
