"""Before/after pairs: the same transfer on the same path, made once with a problem and once with
its fix applied (issue #29, `tcplens compare BEFORE AFTER`).

Each pair changes exactly one thing of the applications (a fixed buffer removed, one pooled
connection instead of one per request, no DNS lookup first); the link, the sizes, the RTT and the
capture point stay. Both are captured at the client, so the client's own timings in the
manifest (``client.elapsed_s``: from its first DNS query or connect to the last byte of the last
response) and the capture's view of the transfer measure the same span.

The pairs are not part of ``catalogue()`` (one situation per scenario there, each checked by the
diagnosis tests); ``python -m lab --pairs`` makes them, ``pairs()`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lab.scenario import HEADERS, KB, MB, Scenario


@dataclass(frozen=True)
class Pair:
    name: str
    cause: str  # the finding code BEFORE shows and AFTER no longer does
    before: Scenario
    after: Scenario

    @property
    def scenarios(self) -> tuple[Scenario, Scenario]:
        return self.before, self.after


def _pair(
    name: str,
    cause: str,
    before: Scenario,
    fixed: str,
    app: dict[str, Any],
    **changes: Any,
) -> Pair:
    """The AFTER scenario is BEFORE with ``app`` merged into its application (a ``None`` value
    removes the key) and ``changes`` replacing its fields: everything else is the same path and
    the same transfer."""
    after_app = {**before.app, **app}
    after_app = {k: v for k, v in after_app.items() if v is not None}
    return Pair(
        name,
        cause,
        replace(before, name=f"{name}__before"),
        replace(
            before,
            name=f"{name}__after",
            what_happened=f"{before.what_happened}; fixed: {fixed}",
            app=after_app,
            **changes,
        ),
    )


def pairs() -> list[Pair]:
    return [
        _pair(
            "pair_rwnd_rcvbuf32k_get_30ms",
            "receiver-window-limited",
            Scenario(
                "",
                "receiver window too small",
                "receiver_window",
                "HTTP GET of 2 MB; the client set SO_RCVBUF=32768 before connecting",
                30,
                {"action": "get", "size": 2 * MB, "client_rcvbuf": 32768},
                "server",
                capture_at="client",
                snaplen=HEADERS,
            ),
            "no SO_RCVBUF (the kernel autotunes the receive buffer)",
            {"client_rcvbuf": None},
            expected_primary_factor="latency",
        ),
        _pair(
            "pair_sndbuf8k_post_60ms",
            "sender-buffer-limited",
            Scenario(
                "",
                "sender buffer too small",
                "sender_buffer",
                "HTTP POST upload of 400 KB; the client set SO_SNDBUF=8192 and writes 8 KB per call",
                60,
                {
                    "action": "post",
                    "size": 400 * KB,
                    "client_sndbuf": 8192,
                    "client_write_size": 8 * KB,
                },
                "client",
                capture_at="client",
            ),
            "no SO_SNDBUF (the kernel autotunes the send buffer)",
            {"client_sndbuf": None},
            expected_primary_factor="latency",
        ),
        _pair(
            "pair_no_reuse_10_gets_40ms",
            "no-connection-reuse",
            Scenario(
                "",
                "no connection reuse",
                "connection_setup",
                "10 HTTP GETs of 100 KB, each on a new TCP connection (Connection: close)",
                40,
                {"action": "get", "size": 100 * KB, "connections": 10, "close": True},
                "server",
                capture_at="client",
                snaplen=HEADERS,
            ),
            "the 10 GETs on one keep-alive connection",
            {"connections": None, "close": None, "requests": 10},
            expected_primary_factor="latency",
        ),
        _pair(
            "pair_dns_ptr_slow_post_20ms",
            "dns-delay",
            Scenario(
                "",
                "DNS delay before connecting",
                "dns",
                "the client makes a reverse (PTR) DNS lookup of the server's IP literal and a "
                "forward lookup, each answered after 800 ms, then uploads 500 KB",
                20,
                {"action": "post", "size": 500 * KB},
                "client",
                dns_delay_ms=800,
                capture_at="client",
            ),
            "no DNS lookup (the client connects to the address it has)",
            {},
            expected_primary_factor="latency",
            dns_delay_ms=None,
        ),
    ]


def pair_scenarios() -> list[Scenario]:
    return [s for p in pairs() for s in p.scenarios]
