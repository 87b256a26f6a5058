"""A new user's first day (issue 30): a fresh clone's ``make run``, then one upload through the
REST API; the goal is findings within 20 s of ``/api/v1/health`` answering.

Clones this checkout's HEAD into ``.bench/fresh`` (git-ignored) and runs ``make run`` there as
a new user would, with an empty kernel cache (``TCPLENS_KERNEL_CACHE`` in the clone) and data
directory, on a free loopback port. Prints how long ``make run`` took to a healthy app, then
signs up through the API, uploads a lab capture, waits for its analysis and reads its findings,
and prints the seconds from health to findings. Stops the app with SIGINT, as Ctrl-C would, and
checks that nothing of its data directory is left running.

Run with ``make bench BENCH=bench_first_upload`` (a few minutes: a whole install).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
FRESH = ROOT / ".bench" / "fresh"
CAPTURE = ROOT.parent / "shared" / "captures" / "lab" / "rwnd_small_upload.pcap"
GOAL_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """Requests to the app with the session's cookies and its CSRF header."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Content-Type": "application/json"} if path.startswith("/api/v1/auth/") else {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            if "tcplens_csrf" in self.cookies:
                headers["X-CSRF-Token"] = self.cookies["tcplens_csrf"]
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        connection.close()
        return response.status, data


def main() -> int:
    if not CAPTURE.is_file():
        print(f"bench_first_upload: {CAPTURE} not found (shared captures)", file=sys.stderr)
        return 1
    shutil.rmtree(FRESH, ignore_errors=True)
    FRESH.parent.mkdir(exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(FRESH)], check=True)
    port = free_port()
    data_dir = FRESH / ".tcplens-data"
    env = {
        **os.environ,
        "TCPLENS_PORT": str(port),
        "TCPLENS_KERNEL_CACHE": str(FRESH / ".kernels"),
        "TCPLENS_COOKIE_SECURE": "false",  # plain http on loopback: the client sends them back
    }
    for name in ("TCPLENS_DATA_DIR", "TCPLENS_DATABASE_URL", "VIRTUAL_ENV"):
        env.pop(name, None)
    started = time.monotonic()
    log = (FRESH.parent / "fresh-make-run.log").open("wb")
    run = subprocess.Popen(
        ["make", "run"],
        cwd=FRESH,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    client = Client(port)
    try:
        while True:
            with contextlib.suppress(OSError):
                if client.request("GET", "/api/v1/health")[0] == 200:
                    break
            if run.poll() is not None:
                raise SystemExit(
                    f"bench_first_upload: make run ended ({run.returncode}), see {log.name}"
                )
            time.sleep(0.2)
        healthy = time.monotonic()
        print(f"fresh clone: `make run` healthy after {healthy - started:.0f} s (install included)")
        credentials = json.dumps(
            {"email": "first@example.com", "password": "a long first password"}
        ).encode()
        status, body = client.request("POST", "/api/v1/auth/signup", credentials)
        assert status == 202, (status, body)
        status, body = client.request("POST", "/api/v1/auth/login", credentials)
        assert status == 200, (status, body)
        status, body = client.request(
            "POST", f"/api/v1/captures?filename={CAPTURE.name}", CAPTURE.read_bytes()
        )
        assert status == 202, (status, body)
        capture_id = json.loads(body)["capture"]["id"]
        while True:
            state = json.loads(client.request("GET", f"/api/v1/captures/{capture_id}")[1])
            if state["status"] not in ("queued", "running"):
                break
            time.sleep(0.1)
        status, body = client.request("GET", f"/api/v1/captures/{capture_id}/findings")
        found = time.monotonic()
        assert state["status"] == "done" and status == 200, (state, status, body)
        findings = json.loads(body)
        seconds = found - healthy
        print(
            f"first upload ({CAPTURE.name}): {len(findings)} findings "
            f"({', '.join(f['code'] for f in findings)}) {seconds:.1f} s after health "
            f"(goal < {GOAL_S:.0f} s: {'met' if seconds < GOAL_S else 'NOT met'}); "
            f"the job's timings: {state.get('timings_s')}"
        )
    finally:
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C in the terminal of `make run`
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
        time.sleep(1.0)
        left = [
            p
            for p in psutil.process_iter(["cmdline"])
            if any(str(data_dir) in part for part in p.info["cmdline"] or ())
        ]
        for process in left:  # started by this bench: stopped by their ids
            print(f"bench_first_upload: left running: {process.cmdline()}", file=sys.stderr)
            with contextlib.suppress(psutil.Error):
                process.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
