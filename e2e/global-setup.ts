// Starts the real app for the browser tests: `tcplens serve` on a free loopback port, with a fresh
// data directory (so a fresh embedded PostgreSQL) in a temporary directory, and the built SPA.
// The returned function stops it and removes the directory; Playwright calls it also after failures.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const STARTUP_TIMEOUT_MS = 90_000;
// numba compiles the analysis kernels on their first use after a change to the core (one to several
// minutes on 2 busy cores); the specs' upload timeouts are for analysing, not for compiling.
const KERNEL_WARMUP_TIMEOUT_MS = 20 * 60_000;
const WARMUP_CAPTURE = path.join(ROOT, "..", "shared", "captures", "lab", "lossy_download.pcap");

export default async function globalSetup(): Promise<() => Promise<void>> {
  const spaDir = path.join(ROOT, "frontend", "dist");
  if (!existsSync(path.join(spaDir, "index.html"))) {
    throw new Error(`no built SPA in ${spaDir}: run \`npm run build -w frontend\` first`);
  }
  const venvCommand = path.join(ROOT, ".venv", "bin", "tcplens");
  const command = existsSync(venvCommand) ? venvCommand : "tcplens";
  compileAnalysisKernels(command);
  // Directly under the temp dir (world-traversable): as root the embedded server runs as its own user.
  const dataDir = mkdtempSync(path.join(tmpdir(), "tcplens-e2e-"));
  const port = await freeLoopbackPort();
  const baseURL = `http://127.0.0.1:${port}`;

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TCPLENS_HOST: "127.0.0.1",
    TCPLENS_PORT: String(port),
    TCPLENS_DATA_DIR: dataDir,
    TCPLENS_SPA_DIR: spaDir,
    // ux.spec.ts fills one workspace with ~60 captures in one go (the limit has its own tests).
    TCPLENS_MAX_QUEUED_ANALYSES: "100",
    // Every browser of every spec signs in from 127.0.0.1, and a sign-up is two attempts (sign-up,
    // then sign-in); the limits have their own tests (tests/api/test_rate_limits.py).
    TCPLENS_LOGIN_ATTEMPTS_PER_MINUTE: "60",
  };
  delete env.TCPLENS_DATABASE_URL;
  const server = spawn(command, ["serve"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const log: string[] = [];
  server.stdout?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  server.stderr?.on("data", (chunk: Buffer) => log.push(chunk.toString()));

  const stop = async (): Promise<void> => {
    await terminate(server);
    stopLeftoverPostgres(path.join(dataDir, "postgres"));
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    await waitForHealth(`${baseURL}/api/v1/health`, server);
  } catch (error) {
    await stop();
    throw new Error(`tcplens serve did not become healthy: ${String(error)}\n${log.join("")}`);
  }
  process.env.TCPLENS_E2E_BASE_URL = baseURL;
  return stop;
}

/** One `tcplens analyze` of a lab capture (with loss, SACK and every stage) so that the server's
 * analyses load numba's cached kernels instead of compiling them inside a spec's time limit. */
function compileAnalysisKernels(command: string): void {
  if (!existsSync(WARMUP_CAPTURE)) return; // the specs that need lab captures say so themselves
  const run = spawnSync(command, ["analyze", WARMUP_CAPTURE, "--json"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: KERNEL_WARMUP_TIMEOUT_MS,
  });
  if (run.status !== 0) {
    const why = run.error ? String(run.error) : `exit ${run.status}: ${run.stderr?.toString()}`;
    throw new Error(`tcplens analyze ${WARMUP_CAPTURE} failed before the browser tests: ${why}`);
  }
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

async function waitForHealth(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) {
      throw new Error(`it exited with code ${server.exitCode}`);
    }
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no healthy answer from ${url} within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

async function terminate(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  server.kill("SIGTERM");
  const timer = setTimeout(() => server.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

// `tcplens serve` stops its embedded server on exit; if it could not (killed), stop it here with a
// fast shutdown (SIGINT, see PostgreSQL's "Shutting Down the Server") so no server outlives the run.
function stopLeftoverPostgres(pgData: string): void {
  const pidFile = path.join(pgData, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && pid > 0) {
    try {
      process.kill(pid, "SIGINT");
    } catch {
      // already gone
    }
  }
}
