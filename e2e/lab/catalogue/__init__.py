"""The catalogue: every situation of DESIGN.md's table and the healthy controls, each over a grid
of parameter sets (RTT 3-250 ms, rates 5-200 Mbit/s, sizes, buffer sizes, capture at sender or
receiver or both, IPv4/IPv6, handshake captured or not, CUBIC/BBR, several flows at once), split
into a tuning part and a held-out part (``Scenario.heldout``)."""

from __future__ import annotations

import dataclasses

from lab.catalogue.exchanges import application, connection_setup, dns, nagle_delayed_ack
from lab.catalogue.generalise import fresh, heldout, several_flows, slow_start
from lab.catalogue.paths import bandwidth, bulk_control, loss, pooled_control
from lab.catalogue.windows import receiver_app, receiver_window, sender_buffer
from lab.scenario import Scenario

BOTH_ENDS = {
    "rwnd_rcvbuf32k_get_30ms",
    "slow_reader_get_30ms",
    "sndbuf8k_post_80ms",
    "stop_and_wait_16k_25ms",
    "no_reuse_8_posts_120ms",
    "lossy_1pct_get_30ms",
    "bottleneck_15mbit_get_30ms",
    "healthy_bulk_get_20ms",
    "nagle_delack_25_posts_10ms",
    "healthy_pooled_20_gets_30ms",
}


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
        *slow_start(),
        *several_flows(),
        *heldout(),
        *fresh(),
    ]
    # The same transfer captured at both ends in one run (capture-point invariance).
    scenarios = [
        dataclasses.replace(s, both_ends=True) if s.name in BOTH_ENDS else s for s in scenarios
    ]
    names = [s.name for s in scenarios]
    assert len(names) == len(set(names)), "scenario names must be unique"
    return scenarios


def by_name(name: str) -> Scenario:
    for scenario in catalogue():
        if scenario.name == name:
            return scenario
    raise KeyError(name)
