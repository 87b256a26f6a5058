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

from tcplens.tcp.model import (
    VANTAGE_MIDDLE,
    VANTAGE_NEAR_CLIENT,
    VANTAGE_NEAR_SERVER,
    VANTAGE_UNKNOWN,
)

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

# share of the round trip on the client's side of the capture point below which we say
# "near the client" (and above 1 - this, "near the server")
NEAR_SHARE = 0.2


def infer_vantage(syn_rtt_ns: I64, synack_rtt_ns: I64, data_ack_min_ns: I64) -> U8:
    """Per flow, a ``VANTAGE_*`` code (see module docstring).

    ``data_ack_min_ns`` has shape ``(F, 2)``: the smallest data → ACK sample timing each
    direction's data, -1 without one.
    """
    n_flows = syn_rtt_ns.shape[0]
    server_side = syn_rtt_ns.astype(np.float64)  # capture point → server → capture point
    client_side = synack_rtt_ns.astype(np.float64)  # capture point → client → capture point
    known = (syn_rtt_ns >= 0) & (synack_rtt_ns >= 0)

    c2s, s2c = data_ack_min_ns[:, 0], data_ack_min_ns[:, 1]  # client data acked, and reverse
    fallback = ~known & (c2s >= 0) & (s2c >= 0)
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
