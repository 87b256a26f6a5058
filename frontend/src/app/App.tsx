import { HealthStatus } from "../features/health/HealthStatus";
import { ThemeToggle } from "./ThemeToggle";

export function App() {
  return (
    <>
      <header className="app-header">
        <h1 className="app-title">tcplens</h1>
        <ThemeToggle />
      </header>
      <main className="app-main">
        <p className="tagline">Why was this TCP transfer slow, and what do I change?</p>
        <HealthStatus />
      </main>
    </>
  );
}
