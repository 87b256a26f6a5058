"""A lab session: root checks, stale cleanup before, guaranteed cleanup after (also on signals)."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
from types import FrameType

from lab import netns

REQUIRED_TOOLS = ("ip", "tcpdump", "gcc", "setpriv")


def missing_requirements() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "the scenario lab needs root (network namespaces, TAP devices)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing"
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    return None


def _remove_own() -> None:
    for ns in netns.own_namespaces():
        netns.delete_namespace(ns)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM/SIGHUP into an exception so every try/finally in the runner takes its
    # namespaces and processes down; atexit is the last resort.
    raise SystemExit(128 + signum)


def begin() -> list[str]:
    """Remove what crashed runs left behind and make sure this one cleans up after itself."""
    removed = netns.remove_stale()
    atexit.register(_remove_own)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    return removed
