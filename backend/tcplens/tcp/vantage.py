"""Where the capture was taken: near the client, near the server, or in the middle.

It changes what the numbers mean: near the sender, data → ACK time is the full path RTT and
bytes in flight are what the sender has outstanding; near the receiver, data → ACK time is
only the receiver's ACK delay. The handshake tells it best: at the client, SYN → SYN/ACK is the
whole round trip and SYN/ACK → ACK is nearly zero; at the server it is the other way round; in
between both halves are substantial. Without a handshake, the smallest data → ACK sample of
each direction plays the same role (each measures the path beyond the capture point towards
that direction's receiver).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.grouping import group_reduce
from tcplens.tcp.model import (
    RTT_DATA_ACK,
    VANTAGE_MIDDLE,
    VANTAGE_NEAR_CLIENT,
    VANTAGE_NEAR_SERVER,
    VANTAGE_UNKNOWN,
    RttSamples,
)

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

# share of the round trip on the client's side of the capture point below which we say
# "near the client" (and above 1 - this, "near the server")
NEAR_SHARE = 0.2


def infer_vantage(syn_rtt_ns: I64, synack_rtt_ns: I64, rtt: RttSamples, n_flows: int) -> U8:
    """Per flow, a ``VANTAGE_*`` code (see module docstring)."""
    server_side = syn_rtt_ns.astype(np.float64)  # capture point → server → capture point
    client_side = synack_rtt_ns.astype(np.float64)  # capture point → client → capture point
    known = (syn_rtt_ns >= 0) & (synack_rtt_ns >= 0)

    sel = np.flatnonzero(rtt.kind == RTT_DATA_ACK)
    key = rtt.flow[sel].astype(np.int64) * 2 + rtt.direction[sel]
    order = np.argsort(key, kind="stable")
    big = np.iinfo(np.int64).max
    mins = group_reduce(key[order], rtt.rtt_ns[sel][order], 2 * n_flows, np.minimum, big)
    c2s, s2c = mins[0::2], mins[1::2]  # client data acked by the server, and the reverse
    fallback = ~known & (c2s != big) & (s2c != big)
    server_side = np.where(fallback, c2s, server_side)
    client_side = np.where(fallback, s2c, client_side)
    known |= fallback

    total = server_side + client_side
    share = np.divide(client_side, total, out=np.full(n_flows, 0.5), where=total > 0)
    out = np.full(n_flows, VANTAGE_UNKNOWN, dtype=np.uint8)
    out[known] = VANTAGE_MIDDLE
    out[known & (share < NEAR_SHARE)] = VANTAGE_NEAR_CLIENT
    out[known & (share > 1 - NEAR_SHARE)] = VANTAGE_NEAR_SERVER
    return out
