"""The catalogue: every situation of DESIGN.md's table and the healthy controls, each over a grid
of parameter sets (RTT 5-200 ms, sizes, buffer sizes, capture at sender or receiver, IPv4/IPv6)."""

from __future__ import annotations

from lab.catalogue.exchanges import application, connection_setup, dns, nagle_delayed_ack
from lab.catalogue.paths import bandwidth, bulk_control, loss, pooled_control
from lab.catalogue.windows import receiver_app, receiver_window, sender_buffer
from lab.scenario import Scenario


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
