"""The handshake as :func:`tcplens.tcp.events.flow_events` follows it, packet by packet.

Window scale, MSS and SACK-permitted as Wireshark's ``verify_tcp_window_scaling`` decides them
(packet-tcp.c): a SYN without the window-scale option turns scaling off for both directions,
and so does a SYN/ACK without it; the shift is capped at 14 (RFC 7323 §2.3). Also the handshake
rows (:class:`tcplens.tcp.segments.Handshake`) and Wireshark's ``ts_first_rtt`` (the first ACK
after the last SYN), which the out-of-order rule of :mod:`tcplens.tcp.expert` reads.
"""

from __future__ import annotations

import numpy as np

from tcplens.tcp.compiled import inline_kernel
from tcplens.tcp.walk_state import (
    FIRST_RTT,
    HS_DONE,
    HSACK_I,
    LAST_SYN_TIME,
    MSS,
    N_STATE,
    SACK_PERM,
    SYN_I,
    SYNACK_I,
    WS,
    first_at_or_after,
)

MAX_WINDOW_SHIFT = 14  # RFC 7323 §2.3: larger shifts are treated as 14


@inline_kernel
def follow_handshake(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st,
    o,
    v,
    fw,
    i,
    r,
    t,
    is_syn,
    is_ack,
    hs_rows,
    hs_wscale,
    hs_mss,
    hs_sack_perm,
):
    """Packet ``r`` (Segments row ``i``, direction ``fw``, state rows ``o`` and peer ``v``) in
    the handshake: its options into the state, and the flow's handshake rows, last SYN time and
    first RTT into the flow's fields of the state (``SYN_I`` ... ``FIRST_RTT``: in the state,
    not loop variables of the walk, they take no registers from its every packet; once the
    first RTT and the client's ACK are known, an ACK reads one field, ``HS_DONE``)."""
    if is_syn:
        synack_i = st[SYNACK_I]
        h = first_at_or_after(hs_rows, r, 0)
        found = h < hs_rows.shape[0] and hs_rows[h] == r
        opt_wscale = hs_wscale[h] if found else -1
        opt_mss = hs_mss[h] if found else -1
        opt_sack_perm = hs_sack_perm[h] if found else False
        opt = np.int64(min(opt_wscale, MAX_WINDOW_SHIFT))
        if not is_ack:
            if synack_i < 0:
                st[SYN_I] = i
            st[o + MSS] = opt_mss
            st[o + SACK_PERM] = opt_sack_perm
            if opt_wscale < 0:
                st[WS] = -2
                st[N_STATE + WS] = -2
            else:
                st[o + WS] = opt
            st[LAST_SYN_TIME] = t
        elif synack_i < 0:
            st[SYNACK_I] = i
            st[o + MSS] = opt_mss
            st[o + SACK_PERM] = opt_sack_perm
            if opt_wscale < 0:
                st[WS] = -2
                st[N_STATE + WS] = -2
            elif st[v + WS] == -2:
                st[o + WS] = -2
            else:
                st[o + WS] = opt
    elif is_ack and st[HS_DONE] == 0:
        if st[FIRST_RTT] == 0 and st[LAST_SYN_TIME] >= 0:
            st[FIRST_RTT] = t - st[LAST_SYN_TIME]
        if fw == 0 and st[SYNACK_I] >= 0 and st[HSACK_I] == -1:
            st[HSACK_I] = i
        # (neither can change once both are set: a later SYN only moves LAST_SYN_TIME/SYNACK_I;
        # NO_HANDSHAKE_ACK: a FIN or RST came first, tcp.events)
        st[HS_DONE] = st[FIRST_RTT] != 0 and st[HSACK_I] != -1
