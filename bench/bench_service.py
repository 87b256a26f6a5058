"""Benchmark the service: upload + analysis of a ~100 MB capture, and 50 concurrent series clients.

Starts a real ``tcplens serve`` (in-process worker, embedded PostgreSQL in ``.bench/``) on a free
loopback port and measures from outside, printing each figure next to a reference measured in
the same run:

* upload → findings available for a ~100 MB capture (goal: under 5 s), against
  ``tcplens analyze --json`` on the same file (the core alone, no upload, database or files),
  with the job's breakdown by step (``timings_s``); the same for ~100 MB of short flows (the
  flow rows are then the bulk of what is stored);
* 50 concurrent clients fetching a flow's series (random windows, ``max_points=2000``): p50/p99
  latency and requests/s, against the same clients fetching ``/api/v1/health``;
* memory at rest (issue 30): the resident memory of every process ``serve`` runs (itself, the
  analysis fork server and whatever else it started, its embedded PostgreSQL's server and
  backends) once it is idle after start, and again after the load above: RSS per process and
  the total of their proportional set sizes (PSS: a page shared by n processes counts 1/n, so
  the forked processes' shared pages are counted once), against the goal of < 400 MB.

At the end ``serve`` is stopped with SIGTERM, and the bench checks that no process of its data
directory (the embedded PostgreSQL) is left running.

Run with ``make bench BENCH=bench_service``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from bench_analyze import SHORT_SOURCE, read_pcap, read_pcapng, replicate

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".bench" / "service"
SOURCE = ROOT.parent / "shared" / "captures" / "lab" / "rcvbuf_locked_download.pcap"
TARGET_BYTES = 100 * 1024 * 1024
CLIENTS = 50
REQUESTS_PER_CLIENT = 20
TCPLENS = [sys.executable, "-m", "tcplens.cli"]
CORE_STEPS = ("reading", "analysing", "diagnosing")
# The analysis job's timings (GET /captures/{id} ``timings_s``) in the order they happen.
STEPS = [
    "queued",
    "fetch",
    "child_startup",
    "reading",
    "analysing",
    "diagnosing",
    "writing_series",
    "handover",
    "load_result",
    "store_series",
    "store_rows",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(
    port: int, method: str, path: str, token: str, body: object = None, headers: dict | None = None
) -> tuple[int, bytes]:
    # 1 MiB send blocks (http.client's default of 8 KiB makes the client the bottleneck of a
    # 100 MB upload on loopback; a browser sends large blocks).
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600, blocksize=1 << 20)
    connection.request(
        method, path, body=body, headers={"Authorization": f"Bearer {token}", **(headers or {})}
    )
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def load(port: int, token: str, paths: list[str]) -> tuple[list[float], float]:
    """CLIENTS threads, each with its own keep-alive connection, REQUESTS_PER_CLIENT requests."""
    latencies: list[float] = []
    lock = threading.Lock()
    errors: list[str] = []

    def client(seed: int) -> None:
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine = []
        for _ in range(REQUESTS_PER_CLIENT):
            path = rng.choice(paths)
            started = time.perf_counter()
            connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            if response.status != 200:
                errors.append(f"{response.status} {path}")
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise SystemExit(f"bench_service: failed requests: {errors[:3]}")
    return latencies, len(latencies) / elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Measured:
    """One upload → findings: wall time seen by the client and the job's own timings."""

    capture_id: str
    size: int
    total_s: float
    upload_s: float
    state: dict[str, Any]

    def report(self, label: str) -> None:
        facts = self.state["facts"]
        print(
            f"{label}: {self.size / 2**20:.0f} MiB, {facts['packets']} packets, "
            f"{facts['flows']} flows → findings available in {self.total_s:.2f} s "
            f"(goal < 5 s: {'met' if self.total_s < 5 else 'NOT met'})"
        )
        timings = self.state.get("timings_s") or {}
        # The pipeline's order (the database keeps JSON keys in its own order).
        ordered = [s for s in STEPS if s in timings] + sorted(set(timings) - set(STEPS))
        steps = ", ".join(f"{step} {timings[step]:.2f}" for step in ordered)
        print(f"  breakdown (s): upload {self.upload_s:.2f}, {steps}")
        core = sum(timings.get(step, 0.0) for step in CORE_STEPS)
        service = self.total_s - core
        print(
            f"  core (reading + analysing + diagnosing) {core:.2f} s, service around it "
            f"{service:.2f} s ({service / self.total_s:.0%}; includes status polling every 50 ms)"
        )


MEMORY_GOAL_MB = 400


def serve_processes(server: subprocess.Popen[bytes], data_dir: Path) -> list[psutil.Process]:
    """``serve`` and every process it started: its descendants, and the embedded PostgreSQL
    server of its data directory (pg_ctl detaches it) with that server's own processes."""
    found: dict[int, psutil.Process] = {}
    roots = [psutil.Process(server.pid)]
    for process in psutil.process_iter(["cmdline"]):
        if any(str(data_dir) in part for part in process.info["cmdline"] or ()):
            roots.append(process)
    for root in roots:
        with contextlib.suppress(psutil.Error):
            for process in [root, *root.children(recursive=True)]:
                found[process.pid] = process
    return list(found.values())


def wait_until_idle(processes: list[psutil.Process], timeout_s: float = 180) -> None:
    """Until the processes together use < 2 % of a core over each of 15 seconds in a row: the
    fork server warms its kernels after /health answers; after load, PostgreSQL's autovacuum
    runs, and the allocators give back what they kept for reuse a few seconds after the
    last request (pyarrow's jemalloc after its decay time, 10 s)."""
    deadline = time.monotonic() + timeout_s

    def cpu() -> float:
        total = 0.0
        for process in processes:
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    before, quiet = cpu(), 0
    while time.monotonic() < deadline and quiet < 15:
        time.sleep(1.0)
        now = cpu()
        quiet = quiet + 1 if now - before < 0.02 else 0
        before = now


def memory_at_rest(label: str, server: subprocess.Popen[bytes], data_dir: Path) -> float:
    """Print each of serve's processes' RSS and PSS and their totals; returns the PSS total."""
    processes = serve_processes(server, data_dir)
    wait_until_idle(processes)
    processes = serve_processes(server, data_dir)  # (a backend may have come or gone)
    rows = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            info = process.memory_full_info()
            name = " ".join(process.cmdline())[:60] or process.name()
            rows.append((info.rss / 2**20, info.pss / 2**20, process.pid, name))
    rows.sort(reverse=True)
    pss = sum(r[1] for r in rows)
    print(
        f"memory at rest {label}: {len(rows)} processes, PSS total {pss:.0f} MiB "
        f"(RSS sum {sum(r[0] for r in rows):.0f} MiB; goal < {MEMORY_GOAL_MB} MB: "
        f"{'met' if pss * 2**20 < MEMORY_GOAL_MB * 1e6 else 'NOT met'})"
    )
    for rss, proportional, pid, name in rows:
        print(f"  {rss:7.1f} MiB RSS {proportional:7.1f} MiB PSS  {pid:>7d} {name}")
    return pss


def left_running(data_dir: Path) -> list[psutil.Process]:
    """Processes of ``serve``'s data directory still running (its embedded PostgreSQL)."""
    return [
        process
        for process in psutil.process_iter(["cmdline"])
        if any(str(data_dir) in part for part in process.info["cmdline"] or ())
    ]


def upload_to_findings(port: int, token: str, capture: Path) -> Measured:
    """Upload a capture, poll until its analysis ended, fetch its findings."""
    size = capture.stat().st_size
    started = time.perf_counter()
    with capture.open("rb") as file:
        status, body = request(
            port,
            "POST",
            f"/api/v1/captures?filename={capture.name}",
            token,
            body=file,
            headers={"Content-Length": str(size)},
        )
    uploaded_s = time.perf_counter() - started
    assert status == 202, body
    capture_id = json.loads(body)["capture"]["id"]
    while True:
        state = json.loads(request(port, "GET", f"/api/v1/captures/{capture_id}", token)[1])
        if state["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    status, _ = request(port, "GET", f"/api/v1/captures/{capture_id}/findings", token)
    total_s = time.perf_counter() - started
    if state["status"] != "done" or status != 200:
        raise SystemExit(f"bench_service: analysis {state['status']}: {state.get('error')}")
    return Measured(capture_id, size, total_s, uploaded_s, state)


def main() -> int:
    if not SOURCE.is_file():
        print(f"bench_service: {SOURCE} not found (shared captures)", file=sys.stderr)
        return 1
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    capture = OUT / "bulk-100mb.pcap"
    bulk = read_pcap(SOURCE)
    replicate(
        bulk, TARGET_BYTES // sum(len(d) + 16 for d in bulk.data), capture, vary_address=False
    )
    short_capture = OUT / "short-100mb.pcap"
    short = read_pcapng(SHORT_SOURCE)
    replicate(
        short,
        TARGET_BYTES // sum(len(d) + 16 for d in short.data),
        short_capture,
        vary_address=True,
    )

    started = time.perf_counter()
    subprocess.run([*TCPLENS, "analyze", str(capture), "--json"], check=True, capture_output=True)
    reference_s = time.perf_counter() - started

    port = free_port()
    data_dir = OUT / "data"
    env = {**os.environ, "TCPLENS_DATA_DIR": str(data_dir), "TCPLENS_PORT": str(port)}
    env.pop("TCPLENS_DATABASE_URL", None)
    email = "bench@example.com"
    subprocess.run(
        [*TCPLENS, "users", "create", email, "--password-stdin"],
        env=env,
        input=b"bench password\n",
        check=True,
        capture_output=True,
    )
    token = subprocess.run(
        [*TCPLENS, "tokens", "create", "--user", email],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    server = subprocess.Popen(
        [*TCPLENS, "serve"],
        env=env,
        stdout=(OUT / "serve.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/api/v1/health", token)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("bench_service: server did not start")
            time.sleep(0.2)

        rest_after_start = memory_at_rest("after start", server, data_dir)
        # warm the worker's analysis process (JIT caches) with a small upload first
        small = SOURCE.read_bytes() + b""
        _, body = request(port, "POST", "/api/v1/captures?filename=warm.pcap", token, body=small)
        warm_id = json.loads(body)["capture"]["id"]
        while json.loads(request(port, "GET", f"/api/v1/captures/{warm_id}", token)[1])[
            "status"
        ] in ("queued", "running"):
            time.sleep(0.05)

        bulk = upload_to_findings(port, token, capture)
        short = upload_to_findings(port, token, short_capture)
        capture_id = bulk.capture_id

        flows = json.loads(
            request(
                port,
                "GET",
                f"/api/v1/captures/{capture_id}/flows?sort=bytes&order=desc&limit=5",
                token,
            )[1]
        )["items"]
        flow = flows[0]
        rng = random.Random(7)
        paths = []
        for _ in range(64):
            a = flow["start_s"] + rng.random() * flow["duration_s"]
            b = a + rng.random() * (flow["start_s"] + flow["duration_s"] - a)
            query = urllib.parse.urlencode(
                {
                    "direction": "server_to_client",
                    "from": f"{a:.6f}",
                    "to": f"{b:.6f}",
                    "max_points": 2000,
                }
            )
            paths.append(f"/api/v1/captures/{capture_id}/flows/{flow['id']}/series?{query}")
        paths.append(
            f"/api/v1/captures/{capture_id}/flows/{flow['id']}/series?direction=server_to_client&max_points=2000"
        )
        series_lat, series_rps = load(port, token, paths)
        health_lat, health_rps = load(port, token, ["/api/v1/health"])
        rest_after_load = memory_at_rest("after load", server, data_dir)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        time.sleep(1.0)
        left = left_running(data_dir)
        for process in left:  # started by this bench: stopped by their ids
            print(
                f"bench_service: left running after SIGTERM: {process.cmdline()}", file=sys.stderr
            )
            with contextlib.suppress(psutil.Error):
                process.terminate()

    bulk.report("bulk transfer")
    short.report("short flows")
    print(
        f"reference `tcplens analyze --json` on the bulk file: {reference_s:.2f} s "
        f"(service / CLI = {bulk.total_s / reference_s:.2f}x)"
    )
    print(
        f"series, {CLIENTS} clients × {REQUESTS_PER_CLIENT}: p50 {percentile(series_lat, 0.5) * 1e3:.1f} ms, "
        f"p99 {percentile(series_lat, 0.99) * 1e3:.1f} ms, {series_rps:.0f} req/s"
    )
    print(
        f"reference /health, same load: p50 {percentile(health_lat, 0.5) * 1e3:.1f} ms, "
        f"p99 {percentile(health_lat, 0.99) * 1e3:.1f} ms, {health_rps:.0f} req/s "
        f"(series / health p50 = {statistics.median(series_lat) / statistics.median(health_lat):.1f}x)"
    )
    print(
        f"memory at rest (PSS, all of serve's processes): after start {rest_after_start:.0f} MiB, "
        f"after load {rest_after_load:.0f} MiB (goal < {MEMORY_GOAL_MB} MB)"
    )
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
