"""The factor registry: every FACTOR of DESIGN.md once, with the words the SPA shows for it and its
severity policy (CONVENTIONS.md, one source of truth per concept).

Everything else reads it: ``finding.FACTORS`` and the labelling's factor indices are its order,
``finding.severity_for_share`` asks whether a factor is ``tunable``, and the SPA's labels are
generated from it (``scripts/export-registry`` writes ``frontend/src/api/registry.gen.ts``; the
``api-client`` check of ``make test`` fails when that file is stale). A new factor is one entry
here, its rule module (``rules/``: ``rules.RULES`` is every module there) and their tests. The labels the
kernels set are these indices (``labelling.C_*`` = ``FACTOR_INDEX[...]``, frozen into the machine
code; the kernel cache's digest covers this file), named there only when the period labelling
itself must tell a factor apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Factor = Literal[
    "receiver_window",
    "receiver_app",
    "sender_buffer",
    "application",
    "connection_setup",
    "slow_start",
    "dns",
    "loss",
    "bandwidth",
    "nagle_delayed_ack",
    "latency",
]


@dataclass(frozen=True)
class FactorInfo:
    factor: Factor
    label: str  # the words the overview, the flow table and the flow page use
    # False: nothing on either host changes it (the path's capacity, the distance); a finding
    # about it is the answer, not a problem, so it is reported as "info" whatever its share
    tunable: bool
    meaning: str  # what it says about a flow, in one line (tooltips, the API's docs)


# Order matters: it is the index used in the per-interval label arrays (``timeline.py``).
REGISTRY: tuple[FactorInfo, ...] = (
    FactorInfo(
        "receiver_window", "Receiver window", True,
        "the receiver's buffer was too small for the path: in flight pinned at its window",
    ),
    FactorInfo(
        "receiver_app", "Receiving app", True,
        "the receiving application read too slowly: its window shrank or closed",
    ),
    FactorInfo(
        "sender_buffer", "Sender buffer", True,
        "the sender did not have the data: a small send buffer or small, slow writes",
    ),
    FactorInfo(
        "application", "Application stop-and-wait", True,
        "the application waited for an answer (or thought) before sending more",
    ),
    FactorInfo(
        "connection_setup", "Connection setup", True,
        "many connections, each paying a handshake and slow start again",
    ),
    FactorInfo(
        "slow_start", "Slow start", True,
        "the transfer was too short to grow TCP's window to the path's speed",
    ),
    FactorInfo("dns", "DNS", True, "a slow DNS lookup held the connection's SYN"),
    FactorInfo("loss", "Loss", True, "packets were lost and the sender slowed down to recover"),
    FactorInfo(
        "bandwidth", "Path bandwidth", False,
        "the path's bottleneck was full: the link delivered all it could",
    ),
    FactorInfo(
        "nagle_delayed_ack", "Nagle + delayed ACK", True,
        "small writes waited for a delayed ACK (Nagle's algorithm)",
    ),
    FactorInfo(
        "latency", "Latency", False,
        "already efficient: the round trips themselves were the time",
    ),
)  # fmt: skip

FACTORS: tuple[Factor, ...] = tuple(info.factor for info in REGISTRY)
FACTOR_INDEX: dict[Factor, int] = {f: i for i, f in enumerate(FACTORS)}
BY_FACTOR: dict[Factor, FactorInfo] = {info.factor: info for info in REGISTRY}
assert set(FACTORS) == set(get_args(Factor)) and len(FACTORS) == len(get_args(Factor))
