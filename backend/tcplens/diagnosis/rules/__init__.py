"""The rules, one per module. Their order decides nothing: a rule that needs another's detection
step reads it (``no_connection_reuse.claimed_flows``, ``stop_and_wait.held_flows``), computed
once per context.

Each rule module has ``CODE`` (stable, kebab-case, what the JSON ``code`` says), ``FACTOR`` and
``detect(ctx) -> list[Finding]``, and a docstring saying what it detects, why it matters and what
to do, like ruff's rules.
"""

from __future__ import annotations

from types import ModuleType

from tcplens.diagnosis.rules import (
    application_delay,
    bandwidth_limited,
    dns_delay,
    nagle_delayed_ack,
    no_connection_reuse,
    packet_loss,
    receiver_app_slow,
    receiver_window_limited,
    round_trip_bound,
    sender_buffer_limited,
    slow_start_bound,
    stop_and_wait,
)

RULES: tuple[ModuleType, ...] = (
    no_connection_reuse,
    dns_delay,
    receiver_window_limited,
    receiver_app_slow,
    sender_buffer_limited,
    stop_and_wait,
    application_delay,
    nagle_delayed_ack,
    packet_loss,
    bandwidth_limited,
    slow_start_bound,
    round_trip_bound,
)
