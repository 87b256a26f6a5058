"""Small synthetic packet tables for the TCP analysis tests: one row per scripted segment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcplens.capture.clock import is_step
from tcplens.capture.table import ACK, LONG_LENGTH, OPTION_TIMESTAMPS, PARSED, SYN, PacketTable

CLIENT = (bytes([0] * 10 + [0xFF, 0xFF, 10, 0, 0, 1]), 40000)
SERVER = (bytes([0] * 10 + [0xFF, 0xFF, 10, 0, 0, 2]), 80)
CLIENT_ISN = 1000
SERVER_ISN = 5000


@dataclass
class Seg:
    """One scripted TCP segment. ``seq``/``ack`` are relative (ISN + 1 is 1), like Wireshark."""

    t_ms: float
    from_client: bool
    seq: int
    ack: int = 0
    length: int = 0
    flags: int = ACK
    window: int = 1000
    mss: int = -1
    wscale: int = -1
    sack_perm: bool = False
    sacks: list[tuple[int, int]] = field(default_factory=list)
    ts: tuple[int, int] | None = None
    src: tuple[bytes, int] | None = None
    dst: tuple[bytes, int] | None = None
    isn: tuple[int, int] = (CLIENT_ISN, SERVER_ISN)


def table(segs: list[Seg]) -> PacketTable:
    """A PacketTable whose frames are ``segs`` in order (frame numbers 1..n)."""
    n = len(segs)
    col = np.array
    src = [s.src or (CLIENT if s.from_client else SERVER) for s in segs]
    dst = [s.dst or (SERVER if s.from_client else CLIENT) for s in segs]
    own_isn = [s.isn[0] if s.from_client else s.isn[1] for s in segs]
    other_isn = [s.isn[1] if s.from_client else s.isn[0] for s in segs]
    # as the reader does: ids in order of first appearance (source first), 0 is ::
    address_ids = {bytes(16): 0}
    for (a, _), (b, _) in zip(src, dst, strict=True):
        address_ids.setdefault(a, len(address_ids))
        address_ids.setdefault(b, len(address_ids))
    # SYN options and SACK blocks only for the packets that carry them, as the reader stores them
    handshake = [
        i for i, s in enumerate(segs) if s.mss >= 0 or s.wscale >= 0 or s.sack_perm
    ]  # fmt: skip
    blocks = [(i, lo, hi) for i, s in enumerate(segs) for lo, hi in s.sacks]
    long = [i for i, s in enumerate(segs) if s.length >= LONG_LENGTH]  # TSO/GRO super-frames
    ts_ns = col([1_700_000_000_000_000_000 + int(s.t_ms * 1e6) for s in segs], np.int64)
    return PacketTable(
        ts_ns=ts_ns,
        interface=np.zeros(n, np.uint16),
        link_type=np.ones(n, np.uint16),
        caplen16=np.full(n, 66, np.uint16),
        origlen16=col([min(66 + s.length, LONG_LENGTH) for s in segs], np.uint16),
        status=np.full(n, PARSED, np.uint8),
        ip_version=np.full(n, 4, np.uint8),
        src_id=col([address_ids[a] for a, _ in src], np.uint32),
        dst_id=col([address_ids[a] for a, _ in dst], np.uint32),
        ip_proto=np.full(n, 6, np.uint8),
        src_port=col([p for _, p in src], np.uint16),
        dst_port=col([p for _, p in dst], np.uint16),
        tcp_seq=col([(s.seq + i) % 2**32 for s, i in zip(segs, own_isn, strict=True)], np.uint32),
        tcp_ack=col(
            [
                (s.ack + i) % 2**32 if s.flags & ACK else 0
                for s, i in zip(segs, other_isn, strict=True)
            ],
            np.uint32,
        ),
        tcp_flags=col([s.flags for s in segs], np.uint16),
        tcp_window=col([s.window for s in segs], np.uint16),
        tcp_hdr_len=np.full(n, 32, np.uint8),
        tcp_payload_len16=col([min(s.length, LONG_LENGTH) for s in segs], np.uint16),
        tcp_options=col(
            [len(s.sacks) | (OPTION_TIMESTAMPS if s.ts is not None else 0) for s in segs], np.uint8
        ),
        ts_val=col([s.ts[0] if s.ts else 0 for s in segs], np.uint32),
        ts_ecr=col([s.ts[1] if s.ts else 0 for s in segs], np.uint32),
        ip_id=(np.arange(n) + 1).astype(np.uint16),  # each packet its own, as Linux numbers them
        tcp_checksum=np.zeros(n, np.uint16),
        handshake_rows=col(handshake, np.uint32),
        handshake_mss=col([segs[i].mss for i in handshake], np.int32),
        handshake_wscale=col([segs[i].wscale for i in handshake], np.int8),
        handshake_sack_perm=col([segs[i].sack_perm for i in handshake], bool),
        sack_block_row=col([i for i, _, _ in blocks], np.uint32),
        sack_block_left=col([(lo + other_isn[i]) % 2**32 for i, lo, _ in blocks], np.uint32),
        sack_block_right=col([(hi + other_isn[i]) % 2**32 for i, _, hi in blocks], np.uint32),
        long_rows=col(long, np.uint32),
        long_caplen=np.full(len(long), 66, np.uint32),
        long_origlen=col([66 + segs[i].length for i in long], np.uint32),
        long_payload=col([segs[i].length for i in long], np.uint32),
        tunnel_rows=np.zeros(0, np.uint32),
        tunnel_layers=np.zeros(0, np.uint16),
        clock_step_rows=np.array(
            [i for i in range(1, len(ts_ns)) if is_step(int(ts_ns[i] - ts_ns[i - 1]))], np.uint32
        ),
        addresses=np.frombuffer(b"".join(address_ids), np.uint8).reshape(-1, 16).copy(),
    )


def handshake(t0: float = 0.0, rtt_ms: float = 10.0, wscale: int = 7, **kw: Any) -> list[Seg]:
    """SYN, SYN/ACK, ACK with window scaling, MSS 1460 and SACK permitted."""
    return [
        Seg(t0, True, 0, flags=SYN, window=64240, mss=1460, wscale=wscale, sack_perm=True, **kw),
        Seg(
            t0 + rtt_ms,
            False,
            0,
            ack=1,
            flags=SYN | ACK,
            window=65160,
            mss=1460,
            wscale=wscale,
            sack_perm=True,
            **kw,
        ),
        Seg(t0 + rtt_ms + 0.1, True, 1, ack=1, window=502, **kw),
    ]
