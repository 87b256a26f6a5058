"""The parallel flow assignment equals Wireshark's serial conversation state machine.

``_serial`` below is that state machine, packet by packet in capture order (the rule of
:mod:`tcplens.tcp.flows`, as the analysis ran it before it was split into parts); random
captures with few endpoints, many SYNs and few ISNs exercise port reuse, retransmitted SYNs,
conversations crossing the parts and SYN/ACK-only handshakes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplens.capture.table import (
    ACK,
    FIN,
    NOT_TCP,
    OPTION_TIMESTAMPS,
    PARSED,
    RST,
    SYN,
    PacketTable,
)
from tcplens.tcp import flows
from tcplens.tcp.flows import assign_flows
from tests.tcp.synthetic import Seg, table

FLAGS = [SYN, SYN | ACK, ACK, ACK, ACK | FIN, RST, 0]


@dataclasses.dataclass
class _Conversation:
    """The state machine's per-conversation state: current flow, each direction's base."""

    flow: int = -1
    base: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    base_set: list[bool] = dataclasses.field(default_factory=lambda: [False, False])


def _serial(p: PacketTable) -> dict[str, list[Any]]:
    ok = ((p.status & PARSED) != 0) & ((p.status & NOT_TCP) == 0) & (p.ip_proto == 6)
    conv: dict[tuple[tuple[int, int], tuple[int, int]], _Conversation] = {}
    flow_of: list[int] = []
    src_lo: list[bool] = []
    first: list[int] = []
    base: list[list[int]] = []
    syn: list[int] = []
    synack: list[int] = []
    rows = [int(r) for r in np.flatnonzero(ok)]
    for r in rows:
        a = (int(p.src_id[r]), int(p.src_port[r]))
        b = (int(p.dst_id[r]), int(p.dst_port[r]))
        d = 0 if a <= b else 1
        state = conv.setdefault((min(a, b), max(a, b)), _Conversation())
        fl, cbase, cset = state.flow, state.base, state.base_set
        f = int(p.tcp_flags[r])
        seq, ack = int(p.tcp_seq[r]), int(p.tcp_ack[r])
        pure = bool(f & SYN) and not f & ACK
        if fl < 0 or (pure and cset[d] and seq != cbase[d]):
            fl = len(first)
            first.append(r)
            base.append([0, 0])
            syn.append(-1)
            synack.append(-1)
            state.flow = fl
            state.base_set = cset = [False, False]
        if not cset[d]:
            cbase[d] = seq if f & SYN else (seq - 1) % 2**32
            cset[d] = True
            base[fl][d] = cbase[d]
        if not cset[1 - d] and f & ACK:
            cbase[1 - d] = (ack - 1) % 2**32
            cset[1 - d] = True
            base[fl][1 - d] = cbase[1 - d]
        if pure and syn[fl] < 0:
            syn[fl] = len(flow_of)
        if f & SYN and not pure and synack[fl] < 0:
            synack[fl] = len(flow_of)
        flow_of.append(fl)
        src_lo.append(d == 0)
    client_lo, from_syn = [], []
    for fl in range(len(first)):
        i = syn[fl] if syn[fl] >= 0 else flow_of.index(fl)
        lo = src_lo[i] if syn[fl] >= 0 or synack[fl] < 0 else not src_lo[synack[fl]]
        client_lo.append(lo)
        from_syn.append(syn[fl] >= 0 or synack[fl] >= 0)
    direction = [int(s != client_lo[fl]) for s, fl in zip(src_lo, flow_of, strict=True)]
    # Segments order: by flow, then direction; stable, so capture order within each (the rows
    # in this order and the offsets say each packet's direction)
    order = sorted(range(len(rows)), key=lambda i: (flow_of[i], direction[i]))
    per = np.zeros((len(first), 2), np.int64)
    for i, fl in enumerate(flow_of):
        per[fl, direction[i]] += 1
    return {
        "first_row": first,
        "client_from_syn": from_syn,
        "isn_client": [b[0] if lo else b[1] for b, lo in zip(base, client_lo, strict=True)],
        "isn_server": [b[1] if lo else b[0] for b, lo in zip(base, client_lo, strict=True)],
        "rows": [rows[i] for i in order],
        "offsets": [0, *np.cumsum(per.ravel()).tolist()],
    }


def _parallel(p: PacketTable) -> dict[str, list[int]]:
    fa = assign_flows(p)
    out = {
        f: getattr(fa, f).tolist()
        for f in ("first_row", "client_from_syn", "isn_client", "isn_server")
    }
    for f in ("rows", "offsets"):
        out[f] = getattr(fa.layout, f).tolist()
    return out


def _random_capture(rng: np.random.Generator, n: int) -> PacketTable:
    p = table([Seg(i, True, 0) for i in range(n)])
    pick = rng.integers
    ends = pick(1, 4, (n, 2))
    return dataclasses.replace(
        p,
        status=np.where(pick(0, 12, n) == 0, PARSED | NOT_TCP, PARSED).astype(np.uint8),
        src_id=ends[:, 0].astype(np.uint32),
        dst_id=ends[:, 1].astype(np.uint32),
        src_port=pick(80, 82, n).astype(np.uint16),
        dst_port=pick(80, 82, n).astype(np.uint16),
        tcp_flags=np.array(FLAGS, np.uint16)[pick(0, len(FLAGS), n)],
        tcp_seq=pick(0, 3, n).astype(np.uint32),
        tcp_ack=pick(0, 3, n).astype(np.uint32),
        # SACK blocks, and the timestamps bit beside them in the same byte
        tcp_options=(pick(0, 5, n) | pick(0, 2, n) * OPTION_TIMESTAMPS).astype(np.uint8),
    )


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(0, 80), st.sampled_from([1, 2, 5]))
def test_random_captures_match_the_serial_state_machine(seed: int, n: int, parts: int) -> None:
    p = _random_capture(np.random.default_rng(seed), n)
    saved = flows.PARTS_PER_THREAD
    flows.PARTS_PER_THREAD = parts  # parts of a few rows: conversations cross them
    try:
        got = _parallel(p)
    finally:
        flows.PARTS_PER_THREAD = saved
    assert got == _serial(p)


@pytest.mark.parametrize("parts", [1, 3])
def test_many_conversations_grow_the_tables(parts: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    n = 20_000  # far more conversations than the hash tables start with
    p = table([Seg(i, True, 0) for i in range(n)])
    rng = np.random.default_rng(7)
    p = dataclasses.replace(
        p,
        src_id=rng.integers(1, 60, n).astype(np.uint32),
        src_port=rng.integers(1024, 1400, n).astype(np.uint16),
        tcp_flags=np.array(FLAGS, np.uint16)[rng.integers(0, len(FLAGS), n)],
        tcp_seq=rng.integers(0, 2, n).astype(np.uint32),
    )
    monkeypatch.setattr(flows, "PARTS_PER_THREAD", parts)
    assert _parallel(p) == _serial(p)


def _long_runs(rng: np.random.Generator, n: int) -> PacketTable:
    """Runs of tens to hundreds of packets of one conversation (a bulk capture's shape, where
    conversations.py takes whole blocks at once), broken by other conversations, non-TCP rows
    and SYNs with a new ISN (port reuse) at random places."""
    p = table([Seg(i, True, 0) for i in range(n)])
    pick = rng.integers
    lengths = pick(1, 300, n)
    conversation = np.repeat(pick(0, 4, n), lengths)[:n]  # endpoints (1 + c, 80) ↔ (9, 443 + c)
    d = pick(0, 2, n).astype(bool)
    client, server = (1 + conversation).astype(np.uint32), np.uint32(9)
    flags = np.where(pick(0, 400, n) == 0, SYN, ACK) | np.where(pick(0, 50, n) == 0, FIN, 0)
    return dataclasses.replace(
        p,
        status=np.where(pick(0, 500, n) == 0, PARSED | NOT_TCP, PARSED).astype(np.uint8),
        src_id=np.where(d, server, client).astype(np.uint32),
        dst_id=np.where(d, client, server).astype(np.uint32),
        src_port=np.where(d, 443 + conversation, 80).astype(np.uint16),
        dst_port=np.where(d, 80, 443 + conversation).astype(np.uint16),
        tcp_flags=flags.astype(np.uint16),
        tcp_seq=pick(0, 1000, n).astype(np.uint32),
        tcp_ack=pick(0, 1000, n).astype(np.uint32),
        tcp_options=(pick(0, 6, n) | pick(0, 2, n) * OPTION_TIMESTAMPS).astype(np.uint8),
    )


@pytest.mark.parametrize(("seed", "parts"), [(1, 1), (2, 1), (3, 2), (4, 3), (5, 7)])
def test_long_runs_of_one_conversation_match_the_serial_state_machine(
    seed: int, parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _long_runs(np.random.default_rng(seed), 20_000)
    monkeypatch.setattr(flows, "PARTS_PER_THREAD", parts)
    assert _parallel(p) == _serial(p)
