"""The lab's CI subset: one real capture per situation (made here, as root), readable by tshark,
with the kernel's ground truth agreeing with the situation's expected factor."""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lab import netns
from lab.runner import LabCapture

from tcplens.capture import read_capture

pytestmark = pytest.mark.lab

E2E = Path(__file__).resolve().parents[3] / "e2e"


def sender_payload(entry: dict[str, Any]) -> int:
    """TCP payload bytes the application's sender must have put on the wire (at least)."""
    app = entry["app"]
    per_request = app["size"]
    if app["action"] == "saw":
        per_request = (app["size"] + 4) * app["messages"]
    return int(per_request * app.get("requests", 1) * app.get("connections", 1))


def test_capture_is_an_ethernet_pcap_with_nothing_dropped(lab_capture: LabCapture) -> None:
    magic, _, _, _, _, snaplen, link_type = struct.unpack(
        "<IHHiIII", lab_capture.path.read_bytes()[:24]
    )
    assert magic == 0xA1B2C3D4
    assert link_type == 1
    assert snaplen == lab_capture.entry["snaplen"]
    assert lab_capture.entry["capture"]["dropped_by_kernel"] == 0


def test_tshark_sees_every_connection_and_the_transfer(lab_capture: LabCapture) -> None:
    assert shutil.which("tshark"), "tshark is installed by scripts/install-system-deps"
    out = subprocess.run(
        [
            "tshark",
            "-n",
            "-r",
            str(lab_capture.path),
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "tcp.stream",
            "-e",
            "tcp.srcport",
            "-e",
            "tcp.len",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    entry = lab_capture.entry
    assert len(out) == entry["capture"]["packets"]
    rows = [line.split("\t") for line in out if line.split("\t")[1]]
    streams = {r[1] for r in rows}
    assert len(streams) == entry["client"]["connections"]
    server_port = str(entry["app"]["port"])
    sent: Counter[str] = Counter()
    for _, _, src_port, length in rows:
        sent["server" if src_port == server_port else "client"] += int(length or 0)
    # Retransmissions only add: the unique payload is at least what the application sent.
    assert sent[entry["sender"]] >= sender_payload(entry)


def test_tcplens_reader_reads_the_capture(lab_capture: LabCapture) -> None:
    capture = read_capture(lab_capture.path)
    entry = lab_capture.entry
    assert capture.info.packets == entry["capture"]["packets"]
    assert capture.info.link_types == (1,)
    assert not capture.info.truncated
    table = capture.packets
    port = entry["app"]["port"]
    from_server = table.src_port == port
    is_tcp = table.ip_proto == 6
    sender_rows = is_tcp & (from_server if entry["sender"] == "server" else table.dst_port == port)
    assert int(table.tcp_payload_len[sender_rows].sum()) >= sender_payload(entry)
    if entry["dns_delay_ms"] is not None:
        # The reverse lookup of the server's literal, asked and answered.
        ptr = capture.dns.qtype == 12
        assert ptr.sum() == 2 and capture.dns.is_response[ptr].sum() == 1


def test_kernel_ground_truth_agrees_with_the_expected_factor(lab_capture: LabCapture) -> None:
    failed = [c for c in lab_capture.entry["ground_truth"]["checks"] if not c["passed"]]
    assert not failed, f"{lab_capture.scenario.name}: {failed}"
    assert lab_capture.entry["ground_truth"]["agrees"]


def test_link_keeps_the_set_round_trip_time(lab_capture: LabCapture) -> None:
    entry = lab_capture.entry
    infos = entry["kernel"]["sender_tcp_info"] + entry["kernel"]["receiver_tcp_info"]
    min_rtt = min(i["min_rtt_ms"] for i in infos)
    # The userspace forwarder releases frames a little late when the host is busy (30-45 us on
    # average here, more when other work holds both cores for the whole run): the link may add
    # what the forwarder itself measured as its mean lateness each way, and nothing more.
    late_ms = sum(d["late_mean_us"] for d in entry["forwarder"].values() if isinstance(d, dict))
    assert entry["rtt_ms"] <= min_rtt <= entry["rtt_ms"] + 1.0 + late_ms / 1000


def test_runs_leave_no_namespace_behind(lab_capture: LabCapture) -> None:
    assert netns.own_namespaces() == []


def test_interrupted_lab_removes_its_namespaces_and_processes(lab_dir: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lab", "--only", "stop_and_wait_8k_200ms", "--out", str(lab_dir)],
        cwd=E2E,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    prefix = f"{netns.PREFIX}{proc.pid}-"
    try:
        deadline = time.monotonic() + 20
        while not any(n.startswith(prefix) for n in os.listdir(netns.NETNS_DIR)):
            assert time.monotonic() < deadline, "the lab never created its namespaces"
            time.sleep(0.05)
        namespaces = [n for n in os.listdir(netns.NETNS_DIR) if n.startswith(prefix)]
        pids = [p for ns in namespaces for p in netns.namespace_pids(ns)]
        time.sleep(1.0)  # mid-run: link, servers and tcpdump are up
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [n for n in os.listdir(netns.NETNS_DIR) if n.startswith(prefix)]
    alive = [p for p in pids if Path(f"/proc/{p}").exists()]
    assert alive == []


def test_killed_lab_leaves_no_process_and_the_next_run_removes_its_namespaces(
    lab_dir: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lab", "--only", "stop_and_wait_8k_200ms", "--out", str(lab_dir)],
        cwd=E2E,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    prefix = f"{netns.PREFIX}{proc.pid}-"
    try:
        deadline = time.monotonic() + 20
        while len([n for n in os.listdir(netns.NETNS_DIR) if n.startswith(prefix)]) < 2:
            assert time.monotonic() < deadline, "the lab never created its namespaces"
            time.sleep(0.05)
        time.sleep(1.0)
        namespaces = [n for n in os.listdir(netns.NETNS_DIR) if n.startswith(prefix)]
        pids = [p for ns in namespaces for p in netns.namespace_pids(ns)]
        assert pids, "servers and tcpdump run inside the namespaces"
    finally:
        proc.kill()  # SIGKILL: no finally, no atexit in the lab
        proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while [p for p in pids if Path(f"/proc/{p}").exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []
    assert set(namespaces) <= set(netns.remove_stale())
    assert not [n for n in os.listdir(netns.NETNS_DIR) if n.startswith(prefix)]
