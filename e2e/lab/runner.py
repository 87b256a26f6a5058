"""Run one scenario: build the network, start the link, the servers, tcpdump and the client, collect
the capture and the kernel's ground truth, and always take everything down again."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lab import ground_truth, netns, tcp_info
from lab.scenario import Scenario

LAB_DIR = Path(__file__).resolve().parent
FORWARDER_SRC = LAB_DIR / "forwarder.c"
BUILD_DIR = LAB_DIR / "build"


def forwarder_binary() -> Path:
    """Compile the forwarder with the machine's gcc when missing or older than its source."""
    binary = BUILD_DIR / "forwarder"
    if binary.exists() and binary.stat().st_mtime >= FORWARDER_SRC.stat().st_mtime:
        return binary
    BUILD_DIR.mkdir(exist_ok=True)
    tmp = BUILD_DIR / f"forwarder.{os.getpid()}"
    subprocess.run(
        ["gcc", "-O2", "-Wall", "-Wextra", "-o", str(tmp), str(FORWARDER_SRC)],
        check=True,
        timeout=120,
    )
    os.replace(tmp, binary)  # atomic: concurrent runs never see a half-written binary
    return binary


class Process:
    """A child process whose output lines are collected by a thread, so waits can time out."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        self.argv = argv
        self.popen = subprocess.Popen(
            # Killed with the lab even when it dies by SIGKILL (no finally runs then):
            # setpriv sets the parent-death signal, which survives the exec of ip and the program.
            ["setpriv", "--pdeathsig", "KILL", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            **kwargs,
        )
        self.stdout: queue.Queue[str] = queue.Queue()
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump, args=(self.popen.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._collect, args=(self.popen.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, pipe: IO[str], into: queue.Queue[str]) -> None:
        for line in pipe:
            into.put(line.rstrip("\n"))

    def _collect(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.stderr_lines.append(line.rstrip("\n"))

    def next_line(self, timeout: float) -> str:
        try:
            line = self.stdout.get(timeout=timeout)
        except queue.Empty:
            raise netns.LabError(
                f"{self.argv[-2:]}: no output within {timeout} s; stderr: {self.stderr_tail()}"
            ) from None
        self.stdout_lines.append(line)
        return line

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while (line := self.next_line(max(0.01, deadline - time.monotonic()))) not in (
            "ready",
            '"ready"',
        ):
            if time.monotonic() > deadline:
                raise netns.LabError(f"{self.argv}: not ready, said {line!r}")

    def wait_stderr(self, pattern: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(pattern in line for line in self.stderr_lines):
                return
            if self.popen.poll() is not None:
                break
            time.sleep(0.02)
        raise netns.LabError(f"{self.argv[:6]}: no {pattern!r}; stderr: {self.stderr_tail()}")

    def signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.popen.pid, sig)

    def finish(self, timeout: float) -> int:
        """Wait for exit (killing the process group if it overstays); all output collected."""
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.popen.wait(timeout=5)
        for t in self._threads:
            t.join(timeout=2)
        while not self.stdout.empty():
            self.stdout_lines.append(self.stdout.get_nowait())
        return code

    def kill(self) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)

    def stderr_tail(self) -> str:
        return " | ".join(self.stderr_lines[-5:])

    def json_records(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stdout_lines:
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(line)
                if isinstance(value, dict):
                    out.append(value)
        return out


def app_argv(ns: str, role: str, spec: dict[str, Any]) -> list[str]:
    return netns.netns_exec(ns, [sys.executable, "-m", "lab.apps", role, json.dumps(spec)])


def app_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(LAB_DIR.parent)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def forwarder_argv(sc: Scenario, fd_client: int, fd_server: int) -> list[str]:
    one_way_us = str(int(sc.rtt_ms * 1000 / 2))
    rate = str(sc.bottleneck_mbps * 1e6)
    direction = [one_way_us, rate, str(sc.queue_bytes), str(sc.random_loss)]
    budget = str(sc.timeout_s + 30)
    return [
        str(forwarder_binary()),
        str(fd_client),
        str(fd_server),
        str(sc.seed),
        budget,
        *direction,
        *direction,
    ]


_NETSTAT_LINE = re.compile(r"^(\w+): (.*)$")


def kernel_counters(ns: str) -> dict[str, int]:
    """The namespace's own TCP counters (/proc/net/netstat, /proc/net/snmp are per namespace):
    DelayedACKs, TCPToZeroWindowAdv, RetransSegs... only the non-zero ones."""
    argv = netns.netns_exec(ns, ["cat", "/proc/net/netstat", "/proc/net/snmp"])
    text = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=True).stdout
    rows: dict[str, list[list[str]]] = {}
    for line in text.splitlines():
        m = _NETSTAT_LINE.match(line)
        if m:
            rows.setdefault(m.group(1), []).append(m.group(2).split())
    out: dict[str, int] = {}
    for proto in ("TcpExt", "Tcp"):
        pair = rows.get(proto, [])
        if len(pair) >= 2:
            for name, value in zip(pair[0], pair[1], strict=False):
                with contextlib.suppress(ValueError):
                    if int(value) and name not in ("RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn"):
                        out[name] = int(value)
    return out


def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@dataclass(frozen=True)
class LabCapture:
    """One capture the lab made, with its manifest entry."""

    path: Path
    entry: dict[str, Any]
    scenario: Scenario

    @property
    def expected_primary_factor(self) -> str:
        return str(self.entry["expected_primary_factor"])


def make_capture(sc: Scenario, out_dir: Path) -> LabCapture:
    entry = run_scenario(sc, out_dir)
    return LabCapture(out_dir / entry["file"], entry, sc)


def run_scenario(sc: Scenario, out_dir: Path) -> dict[str, Any]:
    """Make ``out_dir/<name>.pcap`` and return its manifest entry."""
    started = time.monotonic()
    capture = out_dir / f"{sc.name}.pcap"
    other = out_dir / f"{sc.name}.other_end.pcap"
    capture.unlink(missing_ok=True)
    other.unlink(missing_ok=True)
    spec = sc.app_spec()
    processes: list[Process] = []

    def start(argv: list[str], **kwargs: Any) -> Process:
        proc = Process(argv, **kwargs)
        processes.append(proc)
        return proc

    net = netns.create_network()
    try:
        fds = (net.client_tap_fd, net.server_tap_fd)
        forwarder = start(forwarder_argv(sc, *fds), pass_fds=fds)
        forwarder.wait_ready()
        server = start(app_argv(net.server_ns, "server", spec), env=app_env())
        server.wait_ready()
        if sc.dns_delay_ms is not None:
            start(app_argv(net.server_ns, "dns", sc.dns_spec()), env=app_env()).wait_ready()
        capture_ns = net.client_ns if sc.capture_at == "client" else net.server_ns
        other_ns = net.server_ns if sc.capture_at == "client" else net.client_ns
        dumps = [(capture_ns, capture)] + ([(other_ns, other)] if sc.both_ends else [])
        tcpdumps: list[Process] = []
        if not sc.capture_delay_s:
            tcpdumps = [start(tcpdump_argv(sc, ns, path)) for ns, path in dumps]
            for tcpdump in tcpdumps:
                tcpdump.wait_stderr("listening on", timeout=10)
            time.sleep(0.2)

        client = start(app_argv(net.client_ns, "client", spec), env=app_env())
        if sc.capture_delay_s:
            # Mid-connection: the handshake (and its window scale) is not in the capture.
            time.sleep(sc.capture_delay_s)
            tcpdumps = [start(tcpdump_argv(sc, ns, path)) for ns, path in dumps]
            for tcpdump in tcpdumps:
                tcpdump.wait_stderr("listening on", timeout=10)
        if client.finish(timeout=sc.timeout_s) != 0:
            raise netns.LabError(f"{sc.name}: client failed: {client.stderr_tail()}")
        client_result = client.json_records()[-1]
        connections = len(spec.get("parallel") or []) or spec.get("connections", 1)
        # The server reports a connection once the client's FIN arrived (everything acknowledged).
        wait_until(lambda: _drain_records(server) >= connections, timeout=5 + sc.rtt_ms / 100)
        time.sleep(0.1 + 2 * sc.rtt_ms / 1000)  # the last FIN/ACK crosses the link
        for tcpdump in tcpdumps:
            tcpdump.signal(signal.SIGINT)
        for tcpdump in tcpdumps:
            tcpdump.finish(timeout=10)
        counters = {
            "client": kernel_counters(net.client_ns),
            "server": kernel_counters(net.server_ns),
        }
        forwarder.signal(signal.SIGTERM)
        forwarder.finish(timeout=5)
    finally:
        for proc in reversed(processes):
            proc.kill()
        for proc in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=5)
        net.close()

    server_records = [r for r in server.json_records() if r.get("end") == "server"]
    entry = manifest_entry(
        sc,
        capture,
        client_result,
        server_records,
        counters,
        forwarder.json_records()[-1] if forwarder.json_records() else {},
        tcpdumps[0].stderr_lines,
    )
    if sc.both_ends:
        entry["other_end"] = {
            "file": other.name,
            "capture_at": "server" if sc.capture_at == "client" else "client",
            "capture": capture_stats(other, tcpdumps[1].stderr_lines),
        }
    entry["run_s"] = round(time.monotonic() - started, 2)
    return entry


def tcpdump_argv(sc: Scenario, ns: str, path: Path) -> list[str]:
    return netns.netns_exec(
        ns,
        [
            # --immediate-mode: without it libpcap's TPACKET_V3 ring hands packets over in
            # blocks (1 s timeout) and the packets of the last, unfinished block are lost on
            # SIGINT -- the end of every transfer.
            "tcpdump",
            "-i",
            netns.TAP_NAME,
            "-n",
            "-s",
            str(sc.snaplen),
            "--immediate-mode",
            "-B",
            "16384",  # KiB: a deep ring so tcpdump drops nothing at 100 Mbit/s
            "-U",
            "-Z",
            "root",
            "-w",
            str(path),
        ],
    )


def capture_stats(capture: Path, tcpdump_stderr: list[str]) -> dict[str, Any]:
    def tcpdump_count(what: str) -> int | None:
        return next((int(line.split()[0]) for line in tcpdump_stderr if line.endswith(what)), None)

    return {
        "packets": tcpdump_count("packets captured"),
        "dropped_by_kernel": tcpdump_count("packets dropped by kernel"),
        "bytes": capture.stat().st_size if capture.exists() else 0,
        "link_type": 1,
        "tcpdump": [line for line in tcpdump_stderr if "packets" in line],
    }


def _drain_records(proc: Process) -> int:
    while True:
        try:
            proc.stdout_lines.append(proc.stdout.get_nowait())
        except queue.Empty:
            break
    return sum(1 for r in proc.json_records() if r.get("end") == "server")


def manifest_entry(
    sc: Scenario,
    capture: Path,
    client_result: dict[str, Any],
    server_records: list[dict[str, Any]],
    counters: dict[str, dict[str, int]],
    forwarder: dict[str, Any],
    tcpdump_stderr: list[str],
) -> dict[str, Any]:
    client_infos = [c["tcp_info"] for c in client_result["connections"]]
    server_infos = [r["tcp_info"] for r in server_records]
    sender = client_infos if sc.sender == "client" else server_infos
    receiver = server_infos if sc.sender == "client" else client_infos
    # Several flows at once: each client port with the factor that held it; the kernel's truth
    # (``kernel.sender``) is the held flow's alone, so its checks are not diluted by the others.
    ports = [c.get("port") for c in client_result["connections"]]
    flows = []
    if sc.app.get("parallel"):
        held = sc.extra["held_flow"]
        flows = [
            {
                "client_port": port,
                "expected_factor": sc.expected_primary_factor
                if i == held
                else sc.extra["other_flows_factor"],
            }
            for i, port in enumerate(ports)
        ]
        by_port = {r.get("peer_port"): r["tcp_info"] for r in server_records}
        pair = (client_infos[held], by_port.get(ports[held]))
        sender_held, receiver_held = pair if sc.sender == "client" else pair[::-1]
        sender = [sender_held] if sender_held else sender
        receiver = [receiver_held] if receiver_held else receiver

    requests = [t for c in client_result["connections"] for t in c["request_s"]]
    entry: dict[str, Any] = {
        # The fields of ../shared/captures/lab/manifest.json, then the lab's own.
        "bottleneck_mbps": sc.bottleneck_mbps,
        "capture_at": sc.capture_at,
        "expected_primary_factor": sc.expected_primary_factor,
        "file": capture.name,
        "random_loss": sc.random_loss,
        "rtt_ms": sc.rtt_ms,
        "snaplen": sc.snaplen,
        "what_happened": sc.what_happened,
        "situation": sc.situation,
        "healthy": sc.healthy,
        "ip_version": sc.family,
        "queue_bytes": sc.queue_bytes,
        "dns_delay_ms": sc.dns_delay_ms,
        "congestion_control": sc.cc,
        "heldout": sc.heldout,
        "handshake_captured": not sc.capture_delay_s,
        "capture_delay_s": sc.capture_delay_s,
        "flows": flows,
        "sender": sc.sender,
        "app": sc.app_spec(),
        "capture": capture_stats(capture, tcpdump_stderr),
        "client": {
            "elapsed_s": round(client_result["elapsed_s"], 4),
            "connections": len(client_infos),
            "connect_s": [round(c["connect_s"], 4) for c in client_result["connections"]],
            "request_s": [round(t, 4) for t in requests],
            "dns": client_result.get("dns"),
        },
        "kernel": {
            "sender": sender_totals(sender),
            "sender_tcp_info": [tcp_info.summary(i) for i in sender],
            "receiver_tcp_info": [tcp_info.summary(i) for i in receiver],
            "counters": counters,
        },
        "forwarder": forwarder,
    }
    checks = ground_truth.check(entry)
    entry["ground_truth"] = {
        "agrees": all(c["passed"] for c in checks),
        "checks": checks,
    }
    return entry


def sender_totals(infos: list[dict[str, Any]]) -> dict[str, Any]:
    """The sending end's chrono counters summed over its connections, in ms, with shares."""

    def total(key: str) -> int:
        return sum(int(i.get(key) or 0) for i in infos)

    busy = total("busy_time_us")
    rwnd, sndbuf = total("rwnd_limited_us"), total("sndbuf_limited_us")
    return {
        "connections": len(infos),
        "busy_ms": round(busy / 1000, 3),
        "rwnd_limited_ms": round(rwnd / 1000, 3),
        "sndbuf_limited_ms": round(sndbuf / 1000, 3),
        "rwnd_limited_share": round(rwnd / busy, 4) if busy else 0.0,
        "sndbuf_limited_share": round(sndbuf / busy, 4) if busy else 0.0,
        "total_retrans": total("total_retrans"),
        "bytes_acked": total("bytes_acked"),
        "bytes_retrans": total("bytes_retrans"),
        "min_rtt_ms": round(min((i["min_rtt_us"] for i in infos), default=0) / 1000, 3),
        "max_srtt_ms": round(max((i["rtt_us"] for i in infos), default=0) / 1000, 3),
        # The peer's advertised window as the sender last saw it, and the send buffer (doubled
        # by the kernel, socket(7)).
        "snd_wnd": max((int(i.get("snd_wnd") or 0) for i in infos), default=0),
        "so_sndbuf": max((int(i.get("so_sndbuf") or 0) for i in infos), default=0),
    }
