"""The catalogue: every situation of DESIGN.md's table and the healthy controls, each over a grid
of parameter sets (RTT 5-200 ms, sizes, buffer sizes, capture at sender or receiver, IPv4/IPv6).

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
            "cc": "cubic",
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


def receiver_window() -> list[Scenario]:
    f, s = "receiver_window", "receiver window too small"
    return [
        Scenario(
            "rwnd_rcvbuf32k_get_30ms",
            s,
            f,
            "HTTP GET of 3 MB; the client set SO_RCVBUF=32768 before connecting (autotuning off)",
            30,
            {"action": "get", "size": 3 * MB, "client_rcvbuf": 32768},
            "server",
            capture_at="client",
            snaplen=HEADERS,
            ci=True,
        ),
        Scenario(
            "rwnd_listen_rcvbuf16k_post_80ms_v6",
            s,
            f,
            "HTTP POST upload of 500 KB over IPv6; the server set SO_RCVBUF=16384 on its "
            "listening socket",
            80,
            {"action": "post", "size": 500 * KB, "server_rcvbuf": 16384},
            "client",
            family=6,
            capture_at="client",
        ),
        Scenario(
            "rwnd_rcvbuf16k_get_5ms",
            s,
            f,
            "HTTP GET of 6 MB; the client set SO_RCVBUF=16384 before connecting",
            5,
            {"action": "get", "size": 6 * MB, "client_rcvbuf": 16384},
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "rwnd_rcvbuf128k_get_200ms_v6",
            s,
            f,
            "HTTP GET of 2 MB over IPv6; the client set SO_RCVBUF=131072 before connecting "
            "on a 200 ms path",
            200,
            {"action": "get", "size": 2 * MB, "client_rcvbuf": 131072},
            "server",
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def receiver_app() -> list[Scenario]:
    f, s = "receiver_app", "receiving application too slow"
    return [
        Scenario(
            "slow_reader_get_30ms",
            s,
            f,
            "HTTP GET of 400 KB; the client set SO_RCVBUF=16384 and reads 4 KB every 30 ms",
            30,
            {
                "action": "get",
                "size": 400 * KB,
                "client_rcvbuf": 16384,
                "client_read_chunk": 4 * KB,
                "client_read_interval_ms": 30,
            },
            "server",
            capture_at="client",
            snaplen=HEADERS,
            ci=True,
        ),
        Scenario(
            "slow_reader_get_10ms_v6",
            s,
            f,
            "HTTP GET of 600 KB over IPv6; the client set SO_RCVBUF=32768 and reads 16 KB "
            "every 40 ms",
            10,
            {
                "action": "get",
                "size": 600 * KB,
                "client_rcvbuf": 32768,
                "client_read_chunk": 16 * KB,
                "client_read_interval_ms": 40,
            },
            "server",
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "slow_server_reader_post_60ms",
            s,
            f,
            "HTTP POST upload of 300 KB; the server (SO_RCVBUF=16384 on its listening "
            "socket) reads 4 KB every 40 ms",
            60,
            {
                "action": "post",
                "size": 300 * KB,
                "server_rcvbuf": 16384,
                "server_read_chunk": 4 * KB,
                "server_read_interval_ms": 40,
            },
            "client",
            capture_at="client",
        ),
        Scenario(
            "slow_reader_default_buffers_get_20ms",
            s,
            f,
            "HTTP GET of 600 KB with default (autotuned) buffers; the client reads 4 KB "
            "every 25 ms",
            20,
            {
                "action": "get",
                "size": 600 * KB,
                "client_read_chunk": 4 * KB,
                "client_read_interval_ms": 25,
            },
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def sender_buffer() -> list[Scenario]:
    # Sockets are non-blocking, as in event-loop servers and most clients: on the lab's kernel
    # (6.18) a *blocking* write() into a socket with a small SO_SNDBUF was measured to put the whole
    # write in flight regardless of the buffer, so blocking Python sockets would not show the limit.
    f, s = "sender_buffer", "sender buffer too small"
    return [
        Scenario(
            "sndbuf8k_post_80ms",
            s,
            f,
            "HTTP POST upload of 300 KB; the client set SO_SNDBUF=8192 and writes 8 KB per call",
            80,
            {
                "action": "post",
                "size": 300 * KB,
                "client_sndbuf": 8192,
                "client_write_size": 8 * KB,
            },
            "client",
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "server_sndbuf16k_get_20ms_v6",
            s,
            f,
            "HTTP GET of 1 MB over IPv6; the server set SO_SNDBUF=16384 on its listening "
            "socket and writes 8 KB per call",
            20,
            {"action": "get", "size": 1 * MB, "server_sndbuf": 16384, "server_write_size": 8 * KB},
            "server",
            family=6,
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "server_conn_sndbuf16k_get_40ms",
            s,
            f,
            "HTTP GET of 2 MB; the server set SO_SNDBUF=16384 on each accepted connection "
            "and writes 64 KB per call",
            40,
            {
                "action": "get",
                "size": 2 * MB,
                "server_conn_sndbuf": 16384,
                "server_write_size": 64 * KB,
            },
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "sndbuf16k_post_200ms_v6",
            s,
            f,
            "HTTP POST upload of 200 KB over IPv6 on a 200 ms path; the client set "
            "SO_SNDBUF=16384 and writes 8 KB per call",
            200,
            {
                "action": "post",
                "size": 200 * KB,
                "client_sndbuf": 16384,
                "client_write_size": 8 * KB,
            },
            "client",
            family=6,
            capture_at="server",
        ),
    ]


def application() -> list[Scenario]:
    f, s = "application", "application stop-and-wait"
    return [
        Scenario(
            "stop_and_wait_16k_25ms",
            s,
            f,
            "custom protocol: the client sends 16 KB messages and waits for a 4-byte "
            "application ack after each, 512 KB total",
            25,
            {"action": "saw", "size": 16 * KB, "messages": 32, "port": 9000},
            "client",
            capture_at="client",
            snaplen=96,
            ci=True,
        ),
        Scenario(
            "stop_and_wait_4k_50ms_v6",
            s,
            f,
            "custom protocol over IPv6: 40 messages of 4 KB, each waiting for a 4-byte "
            "application ack",
            50,
            {"action": "saw", "size": 4 * KB, "messages": 40, "port": 9000},
            "client",
            family=6,
            capture_at="server",
        ),
        Scenario(
            "stop_and_wait_64k_10ms",
            s,
            f,
            "custom protocol: 30 messages of 64 KB, each waiting for a 4-byte application ack",
            10,
            {"action": "saw", "size": 64 * KB, "messages": 30, "port": 9000},
            "client",
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "stop_and_wait_8k_200ms",
            s,
            f,
            "custom protocol on a 200 ms path: 10 messages of 8 KB, each waiting for a "
            "4-byte application ack",
            200,
            {"action": "saw", "size": 8 * KB, "messages": 10, "port": 9000},
            "client",
            capture_at="server",
        ),
    ]


def connection_setup() -> list[Scenario]:
    f, s = "connection_setup", "no connection reuse"
    return [
        Scenario(
            "no_reuse_8_posts_120ms",
            s,
            f,
            "8 HTTP POST uploads of 64 KB, each on a new TCP connection (Connection: close)",
            120,
            {"action": "post", "size": 64 * KB, "connections": 8, "close": True},
            "client",
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "no_reuse_12_gets_40ms_v6",
            s,
            f,
            "12 HTTP GETs of 100 KB over IPv6, each on a new TCP connection (Connection: close)",
            40,
            {"action": "get", "size": 100 * KB, "connections": 12, "close": True},
            "server",
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "no_reuse_20_gets_10ms",
            s,
            f,
            "20 HTTP GETs of 30 KB, each on a new TCP connection (Connection: close)",
            10,
            {"action": "get", "size": 30 * KB, "connections": 20, "close": True},
            "server",
            capture_at="client",
        ),
    ]


def dns() -> list[Scenario]:
    f, s = "dns", "DNS delay before connecting"
    return [
        Scenario(
            "dns_ptr_slow_post_20ms",
            s,
            f,
            "the client makes a reverse (PTR) DNS lookup of the server's IP literal and a "
            "forward lookup, each answered after 800 ms, then uploads 100 KB",
            20,
            {"action": "post", "size": 100 * KB},
            "client",
            dns_delay_ms=800,
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "dns_ptr_slow_get_50ms_v6",
            s,
            f,
            "over IPv6: a PTR lookup of the server's address and an AAAA lookup, each "
            "answered after 500 ms, then an HTTP GET of 200 KB",
            50,
            {"action": "get", "size": 200 * KB},
            "server",
            family=6,
            dns_delay_ms=500,
            capture_at="client",
        ),
        Scenario(
            "dns_ptr_slow_get_5ms_at_server",
            s,
            f,
            "a PTR lookup and an A lookup, each answered after 1200 ms, then an HTTP GET "
            "of 50 KB; captured at the server (which also hosts the DNS server)",
            5,
            {"action": "get", "size": 50 * KB},
            "server",
            dns_delay_ms=1200,
            capture_at="server",
        ),
    ]


def loss() -> list[Scenario]:
    f, s = "loss", "loss / congestion"
    return [
        Scenario(
            "lossy_1pct_get_30ms",
            s,
            f,
            "HTTP GET of 4 MB over a path with 1% random loss in both directions",
            30,
            {"action": "get", "size": 4 * MB},
            "server",
            bottleneck_mbps=50,
            random_loss=0.01,
            capture_at="server",
            snaplen=96,
            ci=True,
        ),
        Scenario(
            "lossy_2pct_post_60ms_v6",
            s,
            f,
            "HTTP POST upload of 1.5 MB over IPv6 with 2% random loss in both directions",
            60,
            {"action": "post", "size": 1536 * KB},
            "client",
            bottleneck_mbps=50,
            random_loss=0.02,
            family=6,
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "lossy_half_pct_get_10ms",
            s,
            f,
            "HTTP GET of 4 MB over a 100 Mbit/s path with 0.5% random loss",
            10,
            {"action": "get", "size": 4 * MB},
            "server",
            random_loss=0.005,
            capture_at="client",
            snaplen=HEADERS,
            seed=7,
        ),
        Scenario(
            "lossy_2pct_get_150ms",
            s,
            f,
            "HTTP GET of 600 KB on a 150 ms path with 2% random loss",
            150,
            {"action": "get", "size": 600 * KB},
            "server",
            random_loss=0.02,
            capture_at="server",
            snaplen=HEADERS,
            seed=3,
        ),
    ]


def bandwidth() -> list[Scenario]:
    f, s = "bandwidth", "path bandwidth reached"
    return [
        Scenario(
            "bottleneck_15mbit_get_30ms",
            s,
            f,
            "HTTP GET of 5 MB through a 15 Mbit/s bottleneck with a 60 ms queue",
            30,
            {"action": "get", "size": 5 * MB},
            "server",
            bottleneck_mbps=15,
            queue_ms=60,
            capture_at="server",
            snaplen=96,
            ci=True,
        ),
        Scenario(
            "bottleneck_10mbit_post_60ms_v6",
            s,
            f,
            "HTTP POST upload of 3 MB over IPv6 through a 10 Mbit/s bottleneck with a 100 ms queue",
            60,
            {"action": "post", "size": 3 * MB},
            "client",
            bottleneck_mbps=10,
            queue_ms=100,
            family=6,
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "bottleneck_20mbit_get_10ms",
            s,
            f,
            "HTTP GET of 6 MB through a 20 Mbit/s bottleneck with a 40 ms queue",
            10,
            {"action": "get", "size": 6 * MB},
            "server",
            bottleneck_mbps=20,
            queue_ms=40,
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "bottleneck_8mbit_get_150ms",
            s,
            f,
            "HTTP GET of 3 MB through an 8 Mbit/s bottleneck with a 150 ms queue on a 150 ms path",
            150,
            {"action": "get", "size": 3 * MB},
            "server",
            bottleneck_mbps=8,
            queue_ms=150,
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def nagle_delayed_ack() -> list[Scenario]:
    f, s = "nagle_delayed_ack", "Nagle + delayed ACK"
    return [
        Scenario(
            "nagle_delack_25_posts_10ms",
            s,
            f,
            "25 HTTP requests, each written as two small writes (header, then 200-byte "
            "body) with Nagle on, then waiting for the response",
            10,
            {"action": "post_two_writes", "size": 200, "requests": 25},
            "client",
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "nagle_delack_20_posts_5ms_v6",
            s,
            f,
            "over IPv6: 20 HTTP requests, each two small writes (header, then 500-byte "
            "body) with Nagle on",
            5,
            {"action": "post_two_writes", "size": 500, "requests": 20},
            "client",
            family=6,
            capture_at="server",
        ),
        Scenario(
            "nagle_delack_15_posts_40ms",
            s,
            f,
            "15 HTTP requests, each two small writes (header, then 100-byte body) with "
            "Nagle on, on a 40 ms path",
            40,
            {"action": "post_two_writes", "size": 100, "requests": 15},
            "client",
            capture_at="client",
        ),
    ]


def bulk_control() -> list[Scenario]:
    f, s = "bandwidth", "healthy control: autotuned bulk transfer"
    return [
        Scenario(
            "healthy_bulk_get_20ms",
            s,
            f,
            "HTTP GET of 10 MB with default (autotuned) buffers over a 100 Mbit/s path",
            20,
            {"action": "get", "size": 10 * MB},
            "server",
            healthy=True,
            capture_at="client",
            snaplen=HEADERS,
            ci=True,
        ),
        Scenario(
            "healthy_bulk_post_50ms_v6",
            s,
            f,
            "HTTP POST upload of 8 MB over IPv6 with default buffers over a 50 Mbit/s path",
            50,
            {"action": "post", "size": 8 * MB},
            "client",
            bottleneck_mbps=50,
            healthy=True,
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "healthy_bulk_get_200ms",
            s,
            f,
            "HTTP GET of 8 MB with default buffers over a 20 Mbit/s path with 200 ms RTT",
            200,
            {"action": "get", "size": 8 * MB},
            "server",
            bottleneck_mbps=20,
            healthy=True,
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def pooled_control() -> list[Scenario]:
    f, s = "latency", "healthy control: pooled connection"
    return [
        Scenario(
            "healthy_pooled_20_gets_30ms",
            s,
            f,
            "20 HTTP GETs of 20 KB on one keep-alive connection",
            30,
            {"action": "get", "size": 20 * KB, "requests": 20},
            "server",
            healthy=True,
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "healthy_pooled_30_gets_10ms_v6",
            s,
            f,
            "30 HTTP GETs of 4 KB over IPv6 on one keep-alive connection",
            10,
            {"action": "get", "size": 4 * KB, "requests": 30},
            "server",
            healthy=True,
            family=6,
            capture_at="server",
        ),
        Scenario(
            "healthy_pooled_10_posts_80ms",
            s,
            f,
            "10 HTTP POSTs of 16 KB on one keep-alive connection (header and body in one write)",
            80,
            {"action": "post", "size": 16 * KB, "requests": 10},
            "client",
            healthy=True,
            capture_at="client",
        ),
    ]


def catalogue() -> list[Scenario]:
    scenarios = [
        *receiver_window(),
        *receiver_app(),
        *sender_buffer(),
        *application(),
        *connection_setup(),
        *dns(),
        *loss(),
        *bandwidth(),
        *nagle_delayed_ack(),
        *bulk_control(),
        *pooled_control(),
    ]
    names = [s.name for s in scenarios]
    assert len(names) == len(set(names)), "scenario names must be unique"
    return scenarios


def by_name(name: str) -> Scenario:
    for scenario in catalogue():
        if scenario.name == name:
            return scenario
    raise KeyError(name)
