"""Two network namespaces joined by a userspace link, and their cleanup.

Each lab run gets a *client* and a *server* namespace with a TAP device in each. The TAP devices are
opened here (from inside each namespace, via setns(2)) and their file descriptors handed to the
forwarder process, which moves Ethernet frames between them with a delay, a bottleneck rate and loss.
The kernel on the lab machines has no ``netem`` qdisc, which is why the link lives in userspace.

Everything is named ``tcplens-lab-<pid>-<n>-{client,server}`` so that a later run can find and remove
what a crashed run left behind (``remove_stale``) without touching anything else on the host. The
addresses come from the documentation ranges (RFC 5737 192.0.2.0/24, RFC 3849 2001:db8::/32) and exist
only inside the namespaces; no route leads outside them.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import re
import signal
import struct
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

PREFIX = "tcplens-lab-"
NETNS_DIR = "/var/run/netns"
TAP_NAME = "tap0"

# linux/if_tun.h
TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000

CLIENT_V4, SERVER_V4, DNS_V4 = "192.0.2.1", "192.0.2.2", "192.0.2.53"
CLIENT_V6, SERVER_V6, DNS_V6 = "2001:db8:1::1", "2001:db8:1::2", "2001:db8:1::53"
CLIENT_MAC, SERVER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"

_libc = ctypes.CDLL(None, use_errno=True)


class LabError(RuntimeError):
    """The lab could not build or drive its network (not a finding about TCP)."""


def run_ip(args: Sequence[str], timeout: float = 10.0) -> str:
    proc = subprocess.run(
        ["ip", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise LabError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def netns_exec(ns: str, argv: Sequence[str]) -> list[str]:
    """The argv that runs a program inside namespace ``ns``."""
    return ["ip", "netns", "exec", ns, *argv]


def sysctl(ns: str, settings: dict[str, str]) -> None:
    argv = ["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in settings.items())]
    proc = subprocess.run(
        netns_exec(ns, argv), capture_output=True, text=True, timeout=10, check=False
    )
    if proc.returncode != 0:
        raise LabError(f"sysctl in {ns}: {proc.stderr.strip()}")


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise LabError(f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def open_tap_in(ns: str, name: str = TAP_NAME) -> int:
    """Create a TAP device inside ``ns`` and return its fd (the device lives as long as the fd).

    IFF_NO_PI: frames without the 4-byte packet-information header. No IFF_VNET_HDR, so the kernel
    cannot hand the TAP segmentation-offloaded super-packets: TCP is segmented to MSS-sized frames
    before tcpdump sees them, as on a NIC without TSO.
    """
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        _setns(os.path.join(NETNS_DIR, ns))
        try:
            fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
            ifr = struct.pack("16sH22x", name.encode(), IFF_TAP | IFF_NO_PI)
            fcntl.ioctl(fd, TUNSETIFF, ifr)
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise LabError("could not return to the lab's own network namespace")
    finally:
        os.close(own)
    return fd


@dataclass
class LabNetwork:
    """A client and a server namespace, each with a configured TAP device."""

    client_ns: str
    server_ns: str
    client_tap_fd: int
    server_tap_fd: int

    def close(self) -> None:
        for fd in (self.client_tap_fd, self.server_tap_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        for ns in (self.client_ns, self.server_ns):
            delete_namespace(ns)


_counter = 0


def create_network() -> LabNetwork:
    """Build both namespaces and their TAP devices; on any failure remove what was made."""
    global _counter
    _counter += 1
    base = f"{PREFIX}{os.getpid()}-{_counter}"
    client_ns, server_ns = f"{base}-client", f"{base}-server"
    made: list[str] = []
    fds: list[int] = []
    try:
        for ns in (client_ns, server_ns):
            run_ip(["netns", "add", ns])
            made.append(ns)
            _configure_stack(ns)
        fds.append(open_tap_in(client_ns))
        fds.append(open_tap_in(server_ns))
        _configure_link(client_ns, CLIENT_MAC, [f"{CLIENT_V4}/24"], [f"{CLIENT_V6}/64"])
        _configure_link(
            server_ns,
            SERVER_MAC,
            [f"{SERVER_V4}/24", f"{DNS_V4}/24"],
            [f"{SERVER_V6}/64", f"{DNS_V6}/64"],
        )
        return LabNetwork(client_ns, server_ns, fds[0], fds[1])
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for ns in made:
            delete_namespace(ns)
        raise


def _configure_stack(ns: str) -> None:
    # No metrics cache between connections: each connection starts cold,
    # as it would towards a server the client has not talked to. No router solicitations or DAD,
    # so the captures carry the transfer, not IPv6 housekeeping.
    sysctl(
        ns,
        {
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv6.conf.default.accept_dad": "0",
            "net.ipv6.conf.default.router_solicitations": "0",
            "net.ipv6.conf.default.accept_ra": "0",
            "net.ipv6.conf.all.accept_dad": "0",
        },
    )
    run_ip(["-n", ns, "link", "set", "lo", "up"])


def _configure_link(ns: str, mac: str, v4: list[str], v6: list[str]) -> None:
    run_ip(["-n", ns, "link", "set", TAP_NAME, "address", mac, "mtu", "1500"])
    for addr in v4:
        run_ip(["-n", ns, "addr", "add", addr, "dev", TAP_NAME])
    for addr in v6:
        run_ip(["-n", ns, "-6", "addr", "add", addr, "dev", TAP_NAME, "nodad"])
    run_ip(["-n", ns, "link", "set", TAP_NAME, "up"])


def namespace_pids(ns: str) -> list[int]:
    try:
        out = run_ip(["netns", "pids", ns], timeout=5)
    except (LabError, subprocess.TimeoutExpired):
        return []
    return [int(p) for p in out.split()]


def delete_namespace(ns: str) -> None:
    """Kill what still runs inside ``ns`` (only lab processes live there) and delete it."""
    for pid in namespace_pids(ns):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while namespace_pids(ns) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(LabError, subprocess.TimeoutExpired):
        run_ip(["netns", "del", ns])


_STALE = re.compile(rf"^{re.escape(PREFIX)}(\d+)-\d+-(client|server)$")


def remove_stale() -> list[str]:
    """Remove namespaces left by lab runs whose process no longer exists."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    removed = []
    for name in names:
        m = _STALE.match(name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        delete_namespace(name)
        removed.append(name)
    return removed


def own_namespaces() -> list[str]:
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    mine = f"{PREFIX}{os.getpid()}-"
    return [n for n in names if n.startswith(mine)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
