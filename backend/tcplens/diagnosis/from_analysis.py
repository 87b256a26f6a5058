"""Build the diagnosis views (``transfer.py``) from the TCP analysis and the capture's DNS table.

The TCP analysis is columnar over all flows; the rules want, per connection, the data sender's
segments next to the receiver's acknowledgements. This module only slices and re-times: every
quantity it does not find in ``TcpAnalysis`` (the sender lag) it derives here and says why.
"""

from __future__ import annotations

import numpy as np

from tcplens.capture.table import ACK, Capture, address_text, endpoint_text
from tcplens.diagnosis.transfer import F64, I64, Connection, DnsExchange, FlowFacts, Transfer
from tcplens.tcp.model import (
    CLIENT_TO_SERVER,
    RTT_DATA_ACK,
    RTT_TIMESTAMP,
    TcpAnalysis,
)
from tcplens.tcp.resent import resent

# Above this many connections with data, only the largest are labelled period by period (the
# cross-flow rules still see every connection): a bound on time for hostile or huge captures,
# and the long tail of tiny flows cannot be what made a transfer slow.
MAX_LABELLED_CONNECTIONS = 300


def sender_lag(syn_rtt_ns: int, synack_rtt_ns: int, sender_is_client: bool) -> float | None:
    """Round trip from the capture point to the data sender and back, in seconds.

    The handshake splits the round trip at the capture point: SYN → SYN/ACK is the part through
    the server, SYN/ACK → ACK the part through the client. When the client sends the data, the
    sender's part is SYN/ACK → ACK, and the other way round (None when not captured).
    """
    part = synack_rtt_ns if sender_is_client else syn_rtt_ns
    return part / 1e9 if part >= 0 else None


def flow_facts(analysis: TcpAnalysis, origin: int) -> FlowFacts:
    """Per-flow timing and endpoints of every flow, vectorised over flows (times in seconds
    since ``origin``, in ns)."""
    flows, seg = analysis.flows, analysis.segments
    n = len(flows)

    def secs(ns: I64) -> F64:
        out: F64 = np.where(ns >= 0, (ns - origin) / 1e9, np.nan)
        return out

    # Segments are grouped by (flow, direction): the latest data time of each group is one
    # reduceat over the group boundaries (empty groups masked out afterwards).
    data_t = np.where(seg.payload_len > 0, seg.time_ns, -1)
    starts = seg.offsets[:-1]
    nonempty = starts < seg.offsets[1:]
    per_dir = np.full(starts.size, -1, np.int64)
    if data_t.size:
        per_dir[nonempty] = np.maximum.reduceat(data_t, starts[nonempty])
    last_ns = per_dir.reshape(n, 2).max(axis=1) if n else np.zeros(0, np.int64)
    hs = flows.handshake_rtt_ns
    return FlowFacts(
        id=flows.id.astype(np.int64),
        start_s=(flows.start_ns - origin) / 1e9,
        end_s=(flows.end_ns - origin) / 1e9,
        syn_s=secs(flows.syn_ns),
        established_s=secs(flows.handshake_ack_ns),
        handshake_rtt_s=np.where(hs >= 0, hs / 1e9, np.nan),
        last_data_s=secs(last_ns),
        payload=(flows.bytes_c2s + flows.bytes_s2c).astype(np.int64),
        first_frame=flows.first_frame.astype(np.int64),
        client_addr=flows.client_addr,
        client_port=flows.client_port,
        server_addr=flows.server_addr,
        server_port=flows.server_port,
    )


def connections(analysis: TcpAnalysis, origin: int, facts: FlowFacts) -> list[Connection]:
    """A :class:`Connection` with its transfers for the flows worth labelling period by period:
    those with payload, the ``MAX_LABELLED_CONNECTIONS`` largest when there are more."""
    flows, rtt = analysis.flows, analysis.rtt
    n = len(flows)
    order = np.argsort(-facts.payload, kind="stable")[:MAX_LABELLED_CONNECTIONS]
    chosen = np.sort(order[facts.payload[order] > 0])
    rtt_bounds = np.searchsorted(rtt.flow, np.arange(n + 1), side="left")

    def maybe(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    out: list[Connection] = []
    for f in chosen.tolist():  # per labelled connection; each step inside is vectorised
        syn_rtt = int(flows.handshake_syn_rtt_ns[f])
        synack_rtt = int(flows.handshake_synack_rtt_ns[f])
        r = slice(int(rtt_bounds[f]), int(rtt_bounds[f + 1]))
        transfers = [
            tr
            for d in (0, 1)
            if (tr := _transfer(analysis, origin, f, d, r, syn_rtt, synack_rtt)) is not None
        ]
        out.append(
            Connection(
                flow=int(facts.id[f]),
                client=endpoint_text(facts.client_addr[f], int(facts.client_port[f])),
                server=endpoint_text(facts.server_addr[f], int(facts.server_port[f])),
                start_s=float(facts.start_s[f]),
                end_s=float(facts.end_s[f]),
                syn_s=maybe(float(facts.syn_s[f])),
                established_s=maybe(float(facts.established_s[f])),
                handshake_rtt_s=maybe(float(facts.handshake_rtt_s[f])),
                first_frame=int(facts.first_frame[f]),
                syn_frame=int(facts.first_frame[f]) if not np.isnan(facts.syn_s[f]) else None,
                transfers=tuple(transfers),
            )
        )
    return out


def _transfer(
    analysis: TcpAnalysis, origin: int, f: int, d: int, r: slice, syn_rtt: int, synack_rtt: int
) -> Transfer | None:
    flows, seg, rtt = analysis.flows, analysis.segments, analysis.rtt
    sent = seg.slice_of(f, d)
    data = np.flatnonzero(seg.payload_len[sent] > 0) + sent.start
    if data.size == 0:
        return None
    back = seg.slice_of(f, 1 - d)
    acks = np.flatnonzero((seg.flags[back] & ACK) != 0) + back.start
    sender_is_client = d == CLIENT_TO_SERVER
    # The receiver's window is scaled with the receiver's shift; unknown shift = unknown window.
    rcv_scale = flows.window_scale_server[f] if sender_is_client else flows.window_scale_client[f]
    # An unknown scale leaves a window's size unknown, except zero: zero scaled is still zero.
    raw = seg.window[acks]
    window = raw if rcv_scale >= 0 else np.where(raw == 0, 0, -1)
    zw = analysis.zero_windows
    zsel = np.flatnonzero((zw.flow == f) & (zw.direction == 1 - d))
    rcv_mss = int(flows.mss_server[f] if sender_is_client else flows.mss_client[f])
    payload = seg.payload_len[data]
    lag = sender_lag(syn_rtt, synack_rtt, sender_is_client)
    kind, direction = rtt.kind[r], rtt.direction[r]
    mine = (kind == RTT_DATA_ACK) & (direction == d)
    echo = (kind == RTT_TIMESTAMP) & (direction == 1 - d)
    echo_s = rtt.rtt_ns[r][echo] / 1e9
    if lag is None:
        # No handshake: the timestamp echo through the sender measures the same round trip.
        lag = float(np.min(echo_s)) if echo_s.size else 0.0
    return Transfer(
        flow=int(flows.id[f]),
        direction="client_to_server" if sender_is_client else "server_to_client",
        sender=endpoint_text(
            flows.client_addr[f] if sender_is_client else flows.server_addr[f],
            int(flows.client_port[f] if sender_is_client else flows.server_port[f]),
        ),
        receiver=endpoint_text(
            flows.server_addr[f] if sender_is_client else flows.client_addr[f],
            int(flows.server_port[f] if sender_is_client else flows.client_port[f]),
        ),
        mss=rcv_mss if rcv_mss > 0 else max(int(payload.max()), 1),
        window_scale=int(rcv_scale),
        lag_s=lag,
        t=(seg.time_ns[data] - origin) / 1e9,
        frame=seg.frame[data].astype(np.int64),
        seq=seg.seq[data],
        seq_end=seg.seq[data] + payload,
        # The one retransmission definition tcplens shows (flow JSON, graphs): tcp.resent.
        retransmission=resent(seg.seq[data], payload, seg.events[data]),
        ack_t=(seg.time_ns[acks] - origin) / 1e9,
        ack_frame=seg.frame[acks].astype(np.int64),
        ack=seg.ack[acks],
        window=window.astype(np.int64),
        ack_payload=seg.payload_len[acks].astype(np.int64),
        rtt_t=(rtt.time_ns[r][mine] - origin) / 1e9,
        rtt_s=rtt.rtt_ns[r][mine] / 1e9,
        echo_t=(rtt.time_ns[r][echo] - origin) / 1e9,
        echo_s=echo_s,
        zero_start=(zw.start_ns[zsel] - origin) / 1e9,
        zero_end=(zw.end_ns[zsel] - origin) / 1e9,
        zero_frames=np.stack((zw.start_frame[zsel], zw.end_frame[zsel]), axis=1).astype(np.int64),
        zero_reopened=zw.reopened[zsel].astype(np.bool_),
    )


def dns_exchanges(capture: Capture, origin_ns: int) -> list[DnsExchange]:
    """Each DNS query with its answer (same id and name, first response after it).

    ``origin_ns`` is the time the TCP analysis counts from, so both share one clock.
    """
    dns, pk = capture.dns, capture.packets
    if dns.packet_index.size == 0:
        return []
    origin = origin_ns
    t = (pk.ts_ns[dns.packet_index] - origin) / 1e9
    frame = pk.frame[dns.packet_index]
    answers = dns.answer_addrs
    pending: dict[tuple[int, str], int] = {}
    out: list[DnsExchange] = []
    # DNS messages are few (a handful per connection at most); pairing them is a dictionary walk.
    for i in range(dns.packet_index.size):
        key = (int(dns.dns_id[i]), str(dns.qname[i]))
        if not dns.is_response[i]:
            pending[key] = i
            continue
        q = pending.pop(key, None)
        if q is None:
            continue
        addr = pk.src_addr[dns.packet_index[q]]
        out.append(
            DnsExchange(
                query_t=float(t[q]),
                answer_t=float(t[i]),
                query_frame=int(frame[q]),
                answer_frame=int(frame[i]),
                qname=key[1],
                qtype=int(dns.qtype[q]),
                client=address_text(addr),
                answers=tuple(answers[i]) if i < len(answers) else (),
                rcode=int(dns.rcode[i]),
            )
        )
    for key, q in pending.items():
        addr = pk.src_addr[dns.packet_index[q]]
        out.append(
            DnsExchange(
                query_t=float(t[q]),
                answer_t=None,
                query_frame=int(frame[q]),
                answer_frame=None,
                qname=key[1],
                qtype=int(dns.qtype[q]),
                client=address_text(addr),
                answers=(),
            )
        )
    out.sort(key=lambda x: x.query_t)
    return out
