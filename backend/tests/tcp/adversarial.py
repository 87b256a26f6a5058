"""Adversarial captures of any size, built with numpy: the shapes an upload can take to make a
super-linear pass of the analysis run for hours (issue 31, item 1).

Every packet is Ethernet + IPv4 + TCP, written as ``tcpdump -s`` would write it: the headers
captured, the payload only counted (its length in the IP header and the record's original
length), so that a million 1,000-byte segments take 80 MB, not 1 GB. Each shape is a function
``name(n) -> bytes`` (a pcap of ``n`` packets); :data:`SHAPES` lists them for the scaling test
and ``bench/bench_adversarial.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

U32 = npt.NDArray[np.uint32]
ETHERNET = bytes.fromhex("0200000000020200000000010800")
CLIENT, SERVER = 0x0A000001, 0x0A000002  # 10.0.0.1, 10.0.0.2
SYN, ACK, PSH = 0x02, 0x10, 0x08
START_NS = 1_700_000_000 * 10**9
MSS = 1000


def pcap(
    *,
    ts_ns: npt.ArrayLike,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    sport: npt.ArrayLike,
    dport: npt.ArrayLike,
    seq: npt.ArrayLike,
    ack: npt.ArrayLike,
    flags: npt.ArrayLike,
    payload: npt.ArrayLike,
    window: npt.ArrayLike = 8192,
    options: npt.NDArray[np.uint8] | None = None,
) -> bytes:
    """A little-endian µs libpcap file of one TCP/IPv4/Ethernet packet per row.

    Scalars broadcast. ``options``: (n, L) TCP option bytes, L a multiple of 4, the same L for
    every packet (rows of zeros are an empty option list: EOL, RFC 9293 §3.1).
    """
    ts = np.asarray(ts_ns, np.int64)
    n = ts.size
    opt_len = 0 if options is None else options.shape[1]
    assert opt_len % 4 == 0 and opt_len <= 40
    tcp_len = 20 + opt_len
    captured = 14 + 20 + tcp_len
    rec = np.zeros((n, 16 + captured), np.uint8)

    def put(column: int, value: npt.ArrayLike, dtype: str) -> None:
        field = np.ascontiguousarray(np.broadcast_to(np.asarray(value).astype(dtype), (n,)))
        width = np.dtype(dtype).itemsize
        rec[:, column : column + width] = field.view(np.uint8).reshape(n, width)

    body = np.broadcast_to(np.asarray(payload, np.int64), (n,))
    put(0, ts // 10**9, "<u4")
    put(4, ts % 10**9 // 1000, "<u4")
    put(8, np.full(n, captured), "<u4")
    put(12, captured + body, "<u4")
    rec[:, 16:30] = np.frombuffer(ETHERNET, np.uint8)
    ip = 30
    rec[:, ip] = 0x45
    put(ip + 2, 20 + tcp_len + body, ">u2")
    rec[:, ip + 8] = 64  # TTL
    rec[:, ip + 9] = 6  # TCP
    put(ip + 12, src, ">u4")
    put(ip + 16, dst, ">u4")
    t = ip + 20
    put(t, sport, ">u2")
    put(t + 2, dport, ">u2")
    put(t + 4, np.asarray(seq, np.int64) % 2**32, ">u4")
    put(t + 8, np.asarray(ack, np.int64) % 2**32, ">u4")
    rec[:, t + 12] = (tcp_len // 4) << 4
    put(t + 13, flags, "u1")
    put(t + 14, window, ">u2")
    if options is not None:
        rec[:, t + 20 :] = options
    header = np.array([0xA1B2C3D4, 0x00040002, 0, 0, 262144, 1], "<u4").tobytes()
    return header + rec.tobytes()


def sack_options(blocks: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """NOP, NOP, SACK (RFC 2018 §3) of ``blocks`` (n, k, 2: left, right), as Linux aligns it."""
    n, k, _ = blocks.shape
    out = np.zeros((n, 4 + 8 * k), np.uint8)
    out[:, :4] = (1, 1, 5, 2 + 8 * k)
    edges = (blocks % 2**32).astype(">u4").reshape(n, 2 * k)
    out[:, 4:] = edges.view(np.uint8).reshape(n, 8 * k)
    return out


def _times(n: int, gap_us: int = 100) -> npt.NDArray[np.int64]:
    return START_NS + np.arange(n, dtype=np.int64) * gap_us * 1000


def identical_segments(n: int) -> bytes:
    """The upload of issue 31: one 1,000-byte segment, the same bytes ``n`` times over."""
    return pcap(
        ts_ns=_times(n), src=CLIENT, dst=SERVER, sport=40000, dport=80,
        seq=1000, ack=5000, flags=ACK | PSH, payload=MSS,
    )  # fmt: skip


def retransmissions(n: int) -> bytes:
    """One flow: a handshake, 64 segments, then the same 64 sent again and again (go-back-N
    that never gets an ACK), with a duplicate ACK of the first byte after each round."""
    hand = 3
    rounds = np.arange(n - hand)
    in_round = rounds % 65
    acking = in_round == 64  # the receiver's duplicate ACK closing each round
    from_client = ~acking
    seq = np.where(from_client, 1001 + in_round * MSS, 5001)
    ack = np.where(from_client, 5001, 1001)
    ts = _times(n)
    return pcap(
        ts_ns=ts,
        src=np.r_[CLIENT, SERVER, CLIENT, np.where(from_client, CLIENT, SERVER)],
        dst=np.r_[SERVER, CLIENT, SERVER, np.where(from_client, SERVER, CLIENT)],
        sport=np.r_[40000, 80, 40000, np.where(from_client, 40000, 80)],
        dport=np.r_[80, 40000, 80, np.where(from_client, 80, 40000)],
        seq=np.r_[1000, 5000, 1001, seq],
        ack=np.r_[0, 1001, 5001, ack],
        flags=np.r_[SYN, SYN | ACK, ACK, np.full(n - hand, ACK)],
        payload=np.r_[0, 0, 0, np.where(from_client, MSS, 0)],
    )


def one_packet_flows(n: int) -> bytes:
    """``n`` flows of one SYN each, every one from its own address and port."""
    i = np.arange(n, dtype=np.int64)
    return pcap(
        ts_ns=_times(n, gap_us=10), src=0x0A000000 + 256 + i // 50_000, dst=SERVER,
        sport=10_000 + i % 50_000, dport=80, seq=i * 7919, ack=0, flags=SYN, payload=0,
    )  # fmt: skip


def sack_every_ack(n: int) -> bytes:
    """One bulk transfer whose every other segment is lost (the first among them): each ACK
    stays at the first byte and carries the three newest SACK blocks (RFC 2018 §4), so the
    scoreboard holds a hole for every second segment and the sender retransmits nothing."""
    m = n // 2
    k = np.arange(m, dtype=np.int64)
    data_seq = 1001 + (2 * k + 1) * MSS  # segment 2k + 1 sent (and received); 2k never seen
    newest = np.maximum(k[:, None] - np.arange(3)[None, :], 0)  # the three newest, newest first
    left = 1001 + (2 * newest + 1) * MSS
    blocks = np.stack([left, left + MSS], axis=2)
    ts = np.repeat(_times(m), 2)
    ts[1::2] += 50_000  # each ACK 50 µs after its segment
    opts = np.zeros((2 * m, 28), np.uint8)
    opts[1::2] = sack_options(blocks)
    client = np.tile([True, False], m)
    return pcap(
        ts_ns=ts,
        src=np.where(client, CLIENT, SERVER),
        dst=np.where(client, SERVER, CLIENT),
        sport=np.where(client, 40000, 80),
        dport=np.where(client, 80, 40000),
        seq=np.where(client, np.repeat(data_seq, 2), 5001),
        ack=np.where(client, 5001, 1001),
        flags=ACK,
        payload=np.where(client, MSS, 0),
        options=opts,
    )


def acks_of_nothing(n: int) -> bytes:
    """Pure ACKs, both ways, of bytes never sent: each acknowledges 1,000 bytes more."""
    k = np.arange(n, dtype=np.int64)
    client = k % 2 == 0
    return pcap(
        ts_ns=_times(n),
        src=np.where(client, CLIENT, SERVER),
        dst=np.where(client, SERVER, CLIENT),
        sport=np.where(client, 40000, 80),
        dport=np.where(client, 80, 40000),
        seq=np.where(client, 1001, 5001),
        ack=np.where(client, 5001, 1001) + k * MSS,
        flags=ACK,
        payload=0,
    )


SHAPES: dict[str, Callable[[int], bytes]] = {
    "identical_segments": identical_segments,
    "retransmissions": retransmissions,
    "one_packet_flows": one_packet_flows,
    "sack_every_ack": sack_every_ack,
    "acks_of_nothing": acks_of_nothing,
}
