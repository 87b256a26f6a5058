"""Scenarios where the path decides: random loss, a bottleneck reached, and the healthy
controls (an autotuned bulk transfer, a pooled connection).
"""

from __future__ import annotations

from lab.scenario import HEADERS, KB, MB, Scenario


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
