"""One lab scenario: the situation, the link, the applications' behaviour, where to capture.

A scenario names the FACTOR (DESIGN.md) a correct diagnosis leads with, as
``expected_primary_factor`` in the manifest of ../shared/captures/lab. ``ci`` marks the
representative subset the test suite regenerates on every CI run (one per situation, fast).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lab.netns import DNS_V4, DNS_V6, SERVER_V4, SERVER_V6

FULL = 262144  # tcpdump's default snaplen
HEADERS = 128  # Ethernet + IPv6 + TCP with options fits


@dataclass(frozen=True)
class Scenario:
    name: str
    situation: str
    expected_primary_factor: str
    what_happened: str
    rtt_ms: float
    app: dict[str, Any]
    sender: str  # the end that sends the bulk data: "client" or "server"
    bottleneck_mbps: float = 100.0
    queue_ms: float | None = None  # bottleneck queue, in ms at the bottleneck rate
    random_loss: float = 0.0
    family: int = 4
    capture_at: str = "client"
    snaplen: int = FULL
    dns_delay_ms: float | None = None
    healthy: bool = False
    ci: bool = False
    seed: int = 1
    timeout_s: float = 40.0
    extra: dict[str, Any] = field(default_factory=dict)
    cc: str = "cubic"  # the senders' congestion control (set per socket): "cubic" or "bbr"
    # tcpdump starts this long after the client: > 0 captures the connection mid-way (no
    # handshake, so no window scale in the capture), as a capture started on a busy host does
    capture_delay_s: float = 0.0
    # also capture the other end in the same run: the same transfer seen from both ends, for
    # the capture-point invariance of ``make eval`` (``other_end`` in the manifest)
    both_ends: bool = False
    # kept out of tuning: ``make eval`` reports its accuracy apart (fixed by name, never moved)
    heldout: bool = False

    @property
    def queue_bytes(self) -> int:
        # Default: one round trip's worth (at least 20 ms) at the bottleneck rate, a common
        # router sizing; the bandwidth scenarios set a deeper queue to show queueing delay.
        ms = self.queue_ms if self.queue_ms is not None else max(self.rtt_ms, 20.0)
        return int(self.bottleneck_mbps * 1e6 / 8 * ms / 1000)

    def app_spec(self) -> dict[str, Any]:
        server = SERVER_V6 if self.family == 6 else SERVER_V4
        spec = {
            "family": self.family,
            "server_addr": server,
            "port": 8080,
            "cc": self.cc,
            "timeout_s": self.timeout_s,
            **self.app,
        }
        if self.dns_delay_ms is not None:
            spec["dns"] = {
                "server": DNS_V6 if self.family == 6 else DNS_V4,
                "name": "files.lab.example",
            }
        return spec

    def dns_spec(self) -> dict[str, Any]:
        return {
            "listen": [DNS_V4, DNS_V6],
            "delay_ms": self.dns_delay_ms,
            "name": "files.lab.example",
            "address_v4": SERVER_V4,
            "address_v6": SERVER_V6,
        }


KB, MB = 1024, 1024 * 1024
