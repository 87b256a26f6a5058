"""What the rules reason on: each connection, and each direction of it that carried data.

These are thin, diagnosis-shaped views of the TCP analysis (``tcplens.tcp``) built by
``from_analysis.py``: the rules never touch packets, only these arrays, so every rule is
vectorised over segments and testable on its own.

Times are seconds relative to the capture's first packet. Sequence and acknowledgement numbers
are relative to the data sender's initial sequence number and unwrapped (int64), so that an ACK of
the receiver compares directly with the sender's ``seq_end``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


# No path on Earth has a round trip this long (a geostationary hop is ~0.6 s; RFC 6298 lets an
# RTO back off to 60 s): a larger "round trip" is an idle gap between a segment and its ACK.
MAX_RTT_S = 10.0


@dataclass(frozen=True)
class Transfer:
    """One direction of one connection that carried payload: the data sender's segments and the
    receiver's acknowledgements.

    ``lag_s`` is the time from the capture point to the data sender and back (half of the
    handshake, see ``flow_labels.gather_transfer``): near the sender it is ~0, near the receiver it is
    the whole round trip. The sender decided to send a segment captured at time ``t`` knowing only
    the acknowledgements captured before ``t - lag_s``; every "what did the sender know" question
    in the rules uses that shift, which is what makes them hold at either capture point.
    """

    flow: int
    direction: str  # "client_to_server" | "server_to_client"
    sender: str  # "ip:port"
    receiver: str
    mss: int  # the receiver's MSS option (what a full segment is), else the largest payload sent
    window_scale: int  # the receiver's window-scale shift (0 = not negotiated), -1 unknown
    # the shift was not in the capture (no handshake) but inferred from the data
    # (flow_labels.infer_window_scale); the words say so
    window_scale_inferred: bool
    lag_s: float
    # data segments (payload > 0), capture order
    t: F64
    frame: I64
    seq: I64  # relative sequence number of the first payload byte
    seq_end: I64  # seq + payload length
    retransmission: B
    # every segment the receiver sent (acknowledgements, with or without data), capture order
    ack_t: F64
    ack_frame: I64
    ack: I64  # relative to this sender's sequence space
    window: I64  # advertised window in bytes, scaled; -1 when the scale is unknown (never 0)
    ack_payload: I64  # payload the receiver's segment carried (a response, an application ack)
    # round-trip time samples of this direction's data (data -> ACK), seconds
    rtt_t: F64
    rtt_s: F64
    # round trip through the sender measured with TCP timestamps (receiver's TSval echoed in the
    # sender's data), seconds; what data->ACK samples cannot see when captured near the receiver
    echo_t: F64
    echo_s: F64
    # spans in which the receiver advertised a zero window (tcp's ZeroWindowSpans), seconds
    zero_start: F64
    zero_end: F64
    zero_frames: I64  # shape (k, 2): the first zero advertisement and the reopening (or last)
    zero_reopened: B

    @property
    def payload_bytes(self) -> int:
        """Unique payload bytes: highest sequence sent, not counting retransmissions twice."""
        return int(self.seq_end.max() - self.seq.min()) if self.seq.size else 0

    @property
    def ack_has_data(self) -> B:
        has: B = self.ack_payload > 0
        return has

    @property
    def window_known(self) -> bool:
        return bool(self.window.size) and bool((self.window >= 0).all())


@dataclass(frozen=True)
class Connection:
    """One TCP connection (flow) and the directions of it that carried data."""

    flow: int
    client: str  # "ip:port"
    server: str
    start_s: float  # first packet
    end_s: float  # last packet
    duration_s: float  # end - start without the capture's clock steps (Flows.duration_ns)
    syn_s: float | None  # first SYN, if captured
    established_s: float | None  # third ACK of the handshake (or first data after SYN/ACK)
    handshake_rtt_s: float | None
    first_frame: int
    syn_frame: int | None
    transfers: tuple[Transfer, ...]

    @property
    def server_host(self) -> str:
        return self.server.rsplit(":", 1)[0].strip("[]")

    @property
    def client_host(self) -> str:
        return self.client.rsplit(":", 1)[0].strip("[]")

    @property
    def min_rtt_s(self) -> float | None:
        """Smallest round trip seen: handshake, data->ACK plus ACK->data halves; None when none
        was measured, or when the smallest is above ``MAX_RTT_S``: that is an ACK after an idle
        gap or a lost capture segment, not a path's round trip, and no finding states it."""
        candidates = []
        if self.handshake_rtt_s is not None and self.handshake_rtt_s > 0:
            candidates.append(self.handshake_rtt_s)
        for tr in self.transfers:
            if tr.rtt_s.size:
                candidates.append(float(tr.rtt_s.min()) + tr.lag_s)
        best = min(candidates) if candidates else None
        return best if best is not None and 0 < best <= MAX_RTT_S else None


@dataclass(frozen=True)
class FlowFacts:
    """Per-flow facts of every flow, as arrays (one row per flow, in flow-id order).

    The cross-flow rules (connection reuse, DNS) read these, so they cost the same for ten flows
    or a hundred thousand; endpoints are formatted as text only for the flows a finding names.
    Absent times are NaN.
    """

    id: I64
    start_s: F64
    end_s: F64
    duration_s: F64  # end - start without the capture's clock steps (Flows.duration_ns)
    syn_s: F64
    established_s: F64
    handshake_rtt_s: F64
    last_data_s: F64  # the flow's last segment with payload, NaN without any
    payload: I64  # unique payload bytes, both directions
    first_frame: I64
    client_addr: npt.NDArray[np.uint8]  # (F, 16), IPv4 as IPv4-mapped IPv6
    client_port: npt.NDArray[np.uint16]
    server_addr: npt.NDArray[np.uint8]
    server_port: npt.NDArray[np.uint16]

    def __len__(self) -> int:
        return int(self.id.shape[0])


@dataclass(frozen=True)
class DnsExchange:
    """A DNS query and its answer (if captured)."""

    query_t: float
    answer_t: float | None
    query_frame: int
    answer_frame: int | None
    qname: str
    qtype: int  # 1 A, 28 AAAA, 12 PTR, ...
    client: str  # address that asked
    answers: tuple[str, ...]  # A/AAAA addresses in the answer
    rcode: int = 0  # 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN (RFC 1035 §4.1.1)
