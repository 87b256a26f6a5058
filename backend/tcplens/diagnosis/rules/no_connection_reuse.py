"""no-connection-reuse: one connection after another to the same server, each starting cold.

What it detects
    At least three connections from one client host to the same server address and port, each
    opened after the previous one had finished its data (in sequence, not in parallel). Every
    one of them pays a handshake round trip and starts again from slow start.

Why it matters
    With HTTP ``Connection: close``, a client library without a pool, or a new connection per
    RPC, a series of small transfers spends most of its time in handshakes and slow start: eight
    64 KB uploads at 120 ms spend ~1 s in handshakes alone and restart slow start eight times.

What to do
    Keep the connection open and reuse it: HTTP keep-alive, a connection pool in the client
    library, one long-lived RPC channel.

Thresholds
    Three or more connections in sequence; the time a reused connection would have saved is each
    later connection's handshake plus its slow-start time (a warm connection would have had its
    window grown already). Severity follows that time's share of the active time.
"""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import Evidence, Factor, Finding

CODE = "no-connection-reuse"
FACTOR: Factor = "connection_setup"
MIN_CONNECTIONS = 3


def detect(ctx: Context) -> list[Finding]:
    conns = [c for c in ctx.connections if c.syn_s is not None and c.transfers]
    if len(conns) < MIN_CONNECTIONS:
        return []
    key = np.array([f"{c.client_host}|{c.server}" for c in conns], dtype=object)
    syn = np.array([c.syn_s for c in conns], np.float64)
    last_data = np.array([max(float(tr.t[-1]) for tr in c.transfers) for c in conns], np.float64)
    rtt = np.array([c.min_rtt_s or 0.0 for c in conns], np.float64)
    _, group = np.unique(key, return_inverse=True)
    order = np.lexsort((syn, group))
    g, s, ld, r = group[order], syn[order], last_data[order], rtt[order]
    # In sequence: the next connection of the same group opens after this one's last data
    # (half a round trip of slack for the FIN/ACK crossing it).
    seq_next = (g[1:] == g[:-1]) & (s[1:] >= ld[:-1] - 0.5 * r[:-1])
    # Chains of connections linked by seq_next.
    link = np.concatenate(([False], seq_next))
    chain = np.cumsum(~link) - 1
    sizes = np.bincount(chain)
    setup = ctx.factor_time("connection_setup").seconds
    slow = ctx.factor_time("slow_start").seconds
    findings: list[Finding] = []
    for c in np.flatnonzero(sizes >= MIN_CONNECTIONS):  # per chain of connections (few)
        members = [conns[i] for i in order[chain == c]]
        later = members[1:]
        handshake = sum(setup.get(m.flow, 0.0) for m in later)
        restart = sum(slow.get(m.flow, 0.0) for m in later)
        lost = handshake + restart
        flows = tuple(m.flow for m in members)
        ctx.claimed_by_setup.update(flows)
        span = members[-1].end_s - members[0].start_s
        hs = [m.handshake_rtt_s for m in members if m.handshake_rtt_s]
        summary = (
            f"{len(members)} connections from {members[0].client_host} to {members[0].server} "
            f"were opened one after another in {w.duration(span)}, each paying a "
            f"{w.duration(float(np.median(hs)) if hs else 0.0)} handshake and starting again "
            f"from slow start. Reusing one connection would have saved about {w.duration(lost)}: "
            f"{w.duration(handshake)} of handshakes and {w.duration(restart)} of slow start."
        )
        fix = (
            "Reuse the connection: enable HTTP keep-alive (drop `Connection: close`), use the "
            "client library's connection pool / one session object, or keep one long-lived "
            "channel for repeated requests."
        )
        frames = tuple(sorted(m.syn_frame or m.first_frame for m in members))[:50]
        ranges = tuple((m.syn_s or m.start_s, m.established_s or m.start_s) for m in members)
        findings.append(
            Finding(
                code=CODE,
                factor=FACTOR,
                severity=ctx.severity(lost),
                title=f"No connection reuse: {len(members)} connections to {members[0].server}",
                summary=summary,
                fix=fix,
                time_lost_s=lost,
                flows=flows,
                evidence=Evidence(
                    ranges[:20],
                    frames,
                    {"connections": len(members), "handshake_s": round(handshake, 6)},
                ),
            )
        )
    return findings
