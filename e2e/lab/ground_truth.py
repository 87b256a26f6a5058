"""Does what the kernel (and the link) saw agree with the scenario's expected factor?

Each check is a statement with the number behind it. The sending socket's TCP_INFO chrono counters
speak directly to receiver_window / receiver_app (rwnd_limited), sender_buffer (sndbuf_limited)
and, by their absence, to the others; the namespace counters (/proc/net/netstat, per namespace)
add zero-window advertisements, delayed ACKs and connection opens; the forwarder adds the
bottleneck queue and the packets it dropped. Where no kernel counter speaks (DNS, stop-and-wait,
Nagle), the application's own timings are used and the check says so (source "app").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

Entry = dict[str, Any]
Check = dict[str, Any]


def _check(name: str, passed: bool, value: Any, source: str = "kernel") -> Check:
    return {"check": name, "passed": bool(passed), "value": value, "source": source}


def _limited_share(e: Entry) -> float:
    s = e["kernel"]["sender"]
    return float(s["rwnd_limited_share"] + s["sndbuf_limited_share"])


def _receiver_counters(e: Entry) -> dict[str, int]:
    ends = e["kernel"]["counters"]
    return ends["server"] if e["sender"] == "client" else ends["client"]


def _sender_direction(e: Entry) -> dict[str, Any]:
    fw = e.get("forwarder") or {}
    return fw.get("a_to_b" if e["sender"] == "client" else "b_to_a", {})


def _few_retransmissions(s: dict[str, Any]) -> Check:
    # A tail-loss probe (RFC 8985) may fire when an ACK is a little late; it is not loss.
    share = s["bytes_retrans"] / s["bytes_acked"] if s["bytes_acked"] else 0.0
    return _check("retransmitted < 1% of the bytes (no loss)", share < 0.01, round(share, 5))


def _mean_in_flight(s: dict[str, Any]) -> float:
    """Bytes in flight per round trip on average: what was acknowledged per busy second, times
    the smallest round trip."""
    busy_s = s["busy_ms"] / 1000
    return float(s["bytes_acked"] / busy_s * s["min_rtt_ms"] / 1000) if busy_s else 0.0


def receiver_window(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    if e.get("congestion_control") == "bbr":
        # BBR paces at the delivery rate it measured, which the window sets: tcp_write_xmit
        # stops on the pacing timer before it reaches the window test about half the time, and
        # only the rest counts as rwnd_limited (36-44 % at 12-48 KB windows on 30-250 ms paths,
        # measured on 6.18; neither a smaller buffer nor a longer path changes it). What the
        # window does to the bytes in flight says it instead: pinned at the window.
        in_flight = _mean_in_flight(s)
        limited = [
            _check(
                "sender rwnd_limited >= 25% of busy time (a paced sender)",
                s["rwnd_limited_share"] >= 0.25,
                s["rwnd_limited_share"],
            ),
            _check(
                "mean bytes in flight per RTT >= 80% of the peer's advertised window",
                in_flight >= 0.8 * s["snd_wnd"],
                [round(in_flight), s["snd_wnd"]],
            ),
        ]
    else:
        limited = [
            _check(
                "sender rwnd_limited >= 50% of busy time",
                s["rwnd_limited_share"] >= 0.5,
                s["rwnd_limited_share"],
            )
        ]
    return [
        *limited,
        _check(
            "rwnd_limited > sndbuf_limited",
            s["rwnd_limited_ms"] > s["sndbuf_limited_ms"],
            [s["rwnd_limited_ms"], s["sndbuf_limited_ms"]],
        ),
        _check(
            "receiver never advertised a zero window (it reads at once)",
            _receiver_counters(e).get("TCPToZeroWindowAdv", 0) == 0,
            _receiver_counters(e).get("TCPToZeroWindowAdv", 0),
        ),
    ]


def receiver_app(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    zero = _receiver_counters(e).get("TCPToZeroWindowAdv", 0)
    return [
        _check(
            "sender rwnd_limited >= 50% of busy time",
            s["rwnd_limited_share"] >= 0.5,
            s["rwnd_limited_share"],
        ),
        _check("receiver advertised a zero window (TCPToZeroWindowAdv)", zero >= 1, zero),
    ]


def sender_buffer(e: Entry) -> list[Check]:
    # tcpi_sndbuf_limited only counts from a write that blocked part-way until the next ACK
    # frees space (tcp_cwnd_validate / tcp_check_space), so on small writes it sees little of
    # the limit: the checks rest on what the buffer does to the bytes in flight instead, and
    # the manifest keeps sndbuf_limited_ms as the kernel reported it.
    s = e["kernel"]["sender"]
    in_flight = _mean_in_flight(s)
    # A write larger than the free buffer is still queued whole (measured on 6.18), so the
    # bound is the larger of the buffer and one write.
    write = e["app"].get(
        "client_write_size" if e["sender"] == "client" else "server_write_size", 65536
    )
    bound = max(s["so_sndbuf"], write)
    return [
        _check(
            "sender not receive-window-limited (< 10% of busy time)",
            s["rwnd_limited_share"] < 0.1,
            s["rwnd_limited_share"],
        ),
        _few_retransmissions(s),
        _check(
            "mean bytes in flight per RTT <= max(send buffer as doubled, one write)",
            in_flight <= bound,
            [round(in_flight), bound],
        ),
        _check(
            "mean bytes in flight per RTT <= half the peer's advertised window",
            in_flight <= 0.5 * s["snd_wnd"],
            [round(in_flight), s["snd_wnd"]],
        ),
    ]


def application(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    messages = e["app"]["messages"]
    round_trips = messages * e["rtt_ms"] / 1000
    share = round_trips / e["client"]["elapsed_s"]
    return [
        _check(
            "sender neither window- nor buffer-limited (< 20% of busy time)",
            _limited_share(e) < 0.2,
            _limited_share(e),
        ),
        _few_retransmissions(s),
        _check(
            "one round trip per message is >= 50% of the elapsed time",
            share >= 0.5,
            round(share, 3),
            "app",
        ),
    ]


def connection_setup(e: Entry) -> list[Check]:
    expected = e["app"].get("connections", 1)
    opens = e["kernel"]["counters"]["server"].get("PassiveOpens", 0)
    handshakes = sum(e["client"]["connect_s"])
    return [
        _check(
            "server accepted one connection per request (PassiveOpens)",
            opens == expected and expected >= 3,
            opens,
        ),
        _check(
            "sender not window- or buffer-limited (< 50% of busy time)",
            _limited_share(e) < 0.5,
            _limited_share(e),
        ),
        _check(
            "every handshake took at least one RTT",
            min(e["client"]["connect_s"]) >= 0.9 * e["rtt_ms"] / 1000,
            round(handshakes, 4),
            "app",
        ),
    ]


def dns(e: Entry) -> list[Check]:
    wait = e["client"]["dns"]["wait_s"]
    expected = 2 * e["dns_delay_ms"] / 1000
    return [
        _check(
            "the lookups took the configured delay", wait >= 0.9 * expected, round(wait, 4), "app"
        ),
        _check(
            "DNS wait >= 50% of the client's elapsed time",
            wait >= 0.5 * e["client"]["elapsed_s"],
            round(wait / e["client"]["elapsed_s"], 3),
            "app",
        ),
        _check(
            "sender not window- or buffer-limited (< 50% of busy time)",
            _limited_share(e) < 0.5,
            _limited_share(e),
        ),
    ]


def loss(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    lost = _sender_direction(e).get("lost", 0)
    return [
        _check(
            "sender retransmitted",
            s["total_retrans"] >= 3 and s["bytes_retrans"] > 0,
            s["total_retrans"],
        ),
        _check("the link dropped packets of the transfer", lost >= 3, lost, "link"),
        _check(
            "sender not window- or buffer-limited (< 30% of busy time)",
            _limited_share(e) < 0.3,
            _limited_share(e),
        ),
    ]


def bandwidth(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    goodput_mbps = s["bytes_acked"] * 8 / (s["busy_ms"] / 1000) / 1e6 if s["busy_ms"] else 0.0
    backlog = _sender_direction(e).get("max_backlog_bytes", 0)
    return [
        _check(
            "sender neither window- nor buffer-limited (< 20% of busy time)",
            _limited_share(e) < 0.2,
            _limited_share(e),
        ),
        _check(
            "goodput over busy time >= 60% of the bottleneck",
            goodput_mbps >= 0.6 * e["bottleneck_mbps"],
            round(goodput_mbps, 2),
        ),
        _check(
            "a queue built at the bottleneck (>= 50% of its size)",
            backlog >= 0.5 * e["queue_bytes"],
            backlog,
            "link",
        ),
    ]


# The kernel's ssthresh before the first loss or cut: TCP_INFINITE_SSTHRESH (include/net/tcp.h).
INFINITE_SSTHRESH = 0x7FFFFFFF


# Linux's initial congestion window, in segments (RFC 6928; TCP_INIT_CWND in include/net/tcp.h).
INIT_CWND = 10


def slow_start(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    infos = e["kernel"]["sender_tcp_info"]
    never_left = all(i.get("snd_ssthresh") in (None, INFINITE_SSTHRESH) for i in infos)
    # Slow start doubles the window each round trip from INIT_CWND segments: the transfer needs
    # ceil(log2(segments / INIT_CWND + 1)) rounds after the request's. An exchange much longer
    # than that (a process held up between connect() and send(), as CPU contention does) made
    # another situation than the scenario's.
    segments = math.ceil(e["app"]["size"] / infos[0].get("snd_mss", 1448)) if infos else 0
    rounds = math.ceil(math.log2(segments / INIT_CWND + 1))
    bound = (rounds + 1) * e["rtt_ms"] / 1000 + 0.1
    slowest = max(e["client"]["request_s"], default=0.0)
    return [
        _check(
            f"the exchange took no longer than its {rounds} slow-start rounds and the request's "
            "round trip (+100 ms)",
            slowest <= bound,
            round(slowest, 4),
            "app",
        ),
        _check(
            "the sender never left slow start (snd_ssthresh still TCP_INFINITE_SSTHRESH)",
            never_left and bool(infos),
            [i.get("snd_ssthresh") for i in infos],
        ),
        _check("one connection (PassiveOpens)", _opens(e) == 1, _opens(e)),
        _few_retransmissions(s),
        _check(
            "sender neither window- nor buffer-limited (< 20% of busy time)",
            _limited_share(e) < 0.2,
            _limited_share(e),
        ),
    ]


def _opens(e: Entry) -> int:
    return int(e["kernel"]["counters"]["server"].get("PassiveOpens", 0))


def nagle_delayed_ack(e: Entry) -> list[Check]:
    delayed = _receiver_counters(e).get("DelayedACKs", 0)
    requests = e["app"]["requests"]
    median = statistics.median(e["client"]["request_s"])
    return [
        _check(
            "the receiver delayed its ACKs (DelayedACKs >= half the requests)",
            delayed >= requests / 2,
            delayed,
        ),
        _check(
            "median request time >= RTT + 20 ms",
            median >= (e["rtt_ms"] + 20) / 1000,
            round(median, 4),
            "app",
        ),
    ]


def latency(e: Entry) -> list[Check]:
    s = e["kernel"]["sender"]
    opens = e["kernel"]["counters"]["server"].get("PassiveOpens", 0)
    return [
        _check("one connection for all requests (PassiveOpens)", opens == 1, opens),
        _few_retransmissions(s),
        _check(
            "sender neither window- nor buffer-limited (< 20% of busy time)",
            _limited_share(e) < 0.2,
            _limited_share(e),
        ),
        _check(
            "every request answered",
            len(e["client"]["request_s"]) == e["app"].get("requests", 1),
            len(e["client"]["request_s"]),
            "app",
        ),
    ]


CHECKS: dict[str, Callable[[Entry], list[Check]]] = {
    "receiver_window": receiver_window,
    "receiver_app": receiver_app,
    "sender_buffer": sender_buffer,
    "application": application,
    "connection_setup": connection_setup,
    "dns": dns,
    "loss": loss,
    "bandwidth": bandwidth,
    "nagle_delayed_ack": nagle_delayed_ack,
    "latency": latency,
    "slow_start": slow_start,
}


def check(entry: Entry) -> list[Check]:
    return CHECKS[entry["expected_primary_factor"]](entry)
