"""Scenarios where the application's pattern of exchanges costs the time: stop-and-wait,
a connection per request, a slow DNS lookup first, Nagle meeting delayed ACKs.
"""

from __future__ import annotations

from lab.scenario import HEADERS, KB, Scenario


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
