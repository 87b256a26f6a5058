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
import numpy.typing as npt

from tcplens.capture.table import address_text, endpoint_text
from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import Evidence, Factor, Finding

CODE = "no-connection-reuse"
FACTOR: Factor = "connection_setup"
MIN_CONNECTIONS = 3


def chains(ctx: Context) -> list[npt.NDArray[np.int64]]:
    """This rule's detection step: the flow rows of each chain of at least ``MIN_CONNECTIONS``
    connections from one client host to one server address and port, each opened after the
    previous one's last data (in time order). Computed once per context (``Context.once``):
    other parts read it (``claimed_flows``) instead of this rule writing into the context."""
    return ctx.once(CODE, lambda: _chains(ctx))


def claimed_flows(ctx: Context) -> set[int]:
    """Flows whose setup and slow start this finding accounts for (reuse removes both): the
    slow-start finding leaves them out, and their verdict counts slow start as setup."""
    return {int(ctx.facts.id[r]) for members in chains(ctx) for r in members.tolist()}


def _chains(ctx: Context) -> list[npt.NDArray[np.int64]]:
    fx = ctx.facts
    rows = np.flatnonzero(~np.isnan(fx.syn_s) & (fx.payload > 0))
    if rows.size < MIN_CONNECTIONS:
        return []
    # Same client host, same server address and port: one key per flow from their bytes.
    key = np.concatenate(
        (fx.client_addr[rows], fx.server_addr[rows], fx.server_port[rows, None].view(np.uint8)),
        axis=1,
    )
    # One opaque 34-byte value per row: unique() then sorts by memcmp instead of column by column.
    packed = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1]))).ravel()
    _, group = np.unique(packed, return_inverse=True)
    group = group.ravel()
    syn = fx.syn_s[rows]
    order = np.lexsort((syn, group))
    g, s, ld = group[order], syn[order], fx.last_data_s[rows][order]
    r = np.nan_to_num(fx.handshake_rtt_s[rows][order])
    # In sequence: the next connection of the same group opens after this one's last data
    # (half a round trip of slack for the FIN/ACK crossing it).
    seq_next = (g[1:] == g[:-1]) & (s[1:] >= ld[:-1] - 0.5 * r[:-1])
    link = np.concatenate(([False], seq_next))
    chain = np.cumsum(~link) - 1
    sizes = np.bincount(chain)
    return [rows[order[chain == c]] for c in np.flatnonzero(sizes >= MIN_CONNECTIONS).tolist()]


def detect(ctx: Context) -> list[Finding]:
    fx = ctx.facts
    handshake = np.nan_to_num(fx.established_s - fx.syn_s)
    slow = ctx.factor_time("slow_start").seconds
    findings: list[Finding] = []
    for members in chains(ctx):  # (few)
        later = members[1:]
        ids = fx.id[members]
        paid = float(handshake[later].sum())
        # Only labelled flows have slow-start time (at most MAX_LABELLED_CONNECTIONS of a chain
        # of up to every flow): the sum over those, in the chain's order, is the sum over all
        # (the others add 0.0, which changes no sum that starts from 0.0).
        later_ids = fx.id[later]
        timed = later_ids[np.isin(later_ids, np.fromiter(slow, np.int64, len(slow)))]
        restart = sum((slow[i] for i in timed.tolist()), 0.0)
        lost = paid + restart
        flows = tuple(ids.tolist())
        first, last = int(members[0]), int(members[-1])
        client = address_text(fx.client_addr[first])
        server = endpoint_text(fx.server_addr[first], int(fx.server_port[first]))
        span = float(fx.end_s[last] - fx.start_s[first])
        hs = fx.handshake_rtt_s[members]
        hs = hs[~np.isnan(hs)]
        summary = (
            f"{len(members)} connections from {client} to {server} were opened one after "
            f"another in {w.duration(span)}, each paying a "
            f"{w.duration(float(np.median(hs)) if hs.size else 0.0)} handshake and starting "
            f"again from slow start. Reusing one connection would have saved about "
            f"{w.duration(lost)}: {w.duration(paid)} of handshakes and {w.duration(restart)} of "
            "slow start."
        )
        fix = (
            "Reuse the connection: enable HTTP keep-alive (drop `Connection: close`), use the "
            "client library's connection pool / one session object, or keep one long-lived "
            "channel for repeated requests."
        )
        shown = members[:20]
        ranges = tuple(
            (float(a), float(b))
            for a, b in zip(fx.syn_s[shown], np.nan_to_num(fx.established_s[shown]), strict=True)
        )
        findings.append(
            Finding(
                code=CODE,
                factor=FACTOR,
                severity=ctx.severity(FACTOR, lost, flows=flows),
                title=f"No connection reuse: {len(members)} connections to {server}",
                summary=summary,
                fix=fix,
                time_lost_s=lost,
                flows=flows,
                evidence=Evidence(
                    ranges,
                    tuple(int(x) for x in fx.first_frame[members[:50]].tolist()),
                    {"connections": len(members), "handshake_s": round(paid, 6)},
                ),
            )
        )
    return findings
