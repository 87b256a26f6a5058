"""The kernel's own account of a TCP connection: struct tcp_info, read with getsockopt(TCP_INFO).

Offsets from include/uapi/linux/tcp.h (checked with offsetof() against the headers of the lab
machine, kernel 6.18). The struct only ever grows at its end, so older kernels return a prefix;
fields beyond what the kernel returned are reported as None.

The "chrono" counters (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited, Linux >= 4.10,
net/ipv4/tcp_output.c tcp_chrono_start) are microseconds during which the socket had data in
flight or queued, split by what stopped it from sending more: busy_time is the total, rwnd_limited
the part where the peer's advertised window was full, sndbuf_limited the part where the socket's
send buffer was. They are the ground truth the lab checks each scenario's expected factor against.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

# name: (offset, struct format); all native-endian, as the kernel copies the struct out.
FIELDS: dict[str, tuple[int, str]] = {
    "state": (0, "B"),
    "ca_state": (1, "B"),
    "retransmits": (2, "B"),
    "probes": (3, "B"),
    "backoff": (4, "B"),
    "options": (5, "B"),
    "wscale": (6, "B"),  # snd_wscale:4 | rcv_wscale:4
    "rto_us": (8, "I"),
    "ato_us": (12, "I"),
    "snd_mss": (16, "I"),
    "rcv_mss": (20, "I"),
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "pmtu": (60, "I"),
    "rcv_ssthresh": (64, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "advmss": (84, "I"),
    "reordering": (88, "I"),
    "rcv_rtt_us": (92, "I"),
    "rcv_space": (96, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    "segs_out": (136, "I"),
    "segs_in": (140, "I"),
    "notsent_bytes": (144, "I"),
    "min_rtt_us": (148, "I"),
    "data_segs_in": (152, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "busy_time_us": (168, "Q"),
    "rwnd_limited_us": (176, "Q"),
    "sndbuf_limited_us": (184, "Q"),
    "delivered": (192, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "snd_wnd": (228, "I"),
}
SIZE = 232
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)


def parse(raw: bytes) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for name, (offset, fmt) in FIELDS.items():
        end = offset + struct.calcsize(fmt)
        out[name] = struct.unpack_from(fmt, raw, offset)[0] if end <= len(raw) else None
    return out


def read(sock: socket.socket) -> dict[str, Any]:
    """TCP_INFO of ``sock`` plus the congestion control in use and the buffer sizes."""
    info: dict[str, Any] = parse(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, SIZE))
    info["congestion_control"] = (
        sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
    )
    info["so_sndbuf"] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    info["so_rcvbuf"] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    return info


def summary(info: dict[str, Any]) -> dict[str, Any]:
    """The fields the manifest leads with, in milliseconds."""

    def ms(key: str) -> float | None:
        v = info.get(key)
        return None if v is None else round(v / 1000, 3)

    return {
        "rtt_ms": ms("rtt_us"),
        "min_rtt_ms": ms("min_rtt_us"),
        "total_retrans": info.get("total_retrans"),
        "busy_ms": ms("busy_time_us"),
        "rwnd_limited_ms": ms("rwnd_limited_us"),
        "sndbuf_limited_ms": ms("sndbuf_limited_us"),
        "bytes_acked": info.get("bytes_acked"),
        "bytes_retrans": info.get("bytes_retrans"),
        "snd_cwnd": info.get("snd_cwnd"),
        "snd_ssthresh": info.get("snd_ssthresh"),
        "delivery_rate": info.get("delivery_rate"),
        "snd_wnd": info.get("snd_wnd"),
        "snd_mss": info.get("snd_mss"),
        "congestion_control": info.get("congestion_control"),
        "so_sndbuf": info.get("so_sndbuf"),
        "so_rcvbuf": info.get("so_rcvbuf"),
    }
