"""Small, exact captures built in the tests: packets as bytes, and pcap/pcapng files around them.

Layouts as in the RFCs and the pcap/pcapng drafts; nothing here is used by the product.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field


def ipv4(src: str, dst: str, proto: int, payload: bytes, *, ident: int = 1, frag: int = 0,
         total_len: int | None = None, options: bytes = b"") -> bytes:  # fmt: skip
    """An IPv4 header (RFC 791) + payload; ``frag`` is the flags+offset field."""
    ihl = 5 + len(options) // 4
    length = ihl * 4 + len(payload) if total_len is None else total_len
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x40 | ihl, 0, length, ident, frag, 64, proto, 0,
        ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed,
    )  # fmt: skip
    return header + options + payload


def ipv6(src: str, dst: str, next_header: int, payload: bytes) -> bytes:
    """An IPv6 header (RFC 8200 §3); ``payload`` may start with extension headers."""
    return (
        struct.pack("!IHBB", 0x60000000, len(payload), next_header, 64)
        + ipaddress.IPv6Address(src).packed
        + ipaddress.IPv6Address(dst).packed
        + payload
    )


def tcp(sport: int, dport: int, seq: int, ack: int, flags: int, window: int,
        options: bytes = b"", payload: bytes = b"") -> bytes:  # fmt: skip
    """A TCP header (RFC 9293 §3.1) + payload; ``options`` padded to 4 bytes with EOL."""
    options += b"\x00" * (-len(options) % 4)
    offset = (20 + len(options)) // 4
    return (
        struct.pack("!HHIIBBHHH", sport, dport, seq, ack, offset << 4, flags, window, 0, 0)
        + options
        + payload
    )


def udp(sport: int, dport: int, payload: bytes) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def ethernet(packet: bytes, ethertype: int = 0x0800, vlans: tuple[int, ...] = ()) -> bytes:
    """Ethernet II; ``vlans`` are the TPIDs of stacked tags, outermost first (VID 5 each)."""
    frame = b"\x02\x00\x00\x00\x00\x01" + b"\x02\x00\x00\x00\x00\x02"
    for tpid in vlans:
        frame += struct.pack("!H", tpid) + struct.pack("!H", 5)
    return frame + struct.pack("!H", ethertype) + packet


@dataclass
class Packet:
    ts_ns: int
    data: bytes
    origlen: int | None = None  # default: len(data)
    interface: int = 0
    comment: str | None = None

    @property
    def wire_len(self) -> int:
        return len(self.data) if self.origlen is None else self.origlen


def pcap_file(packets: list[Packet], *, big: bool = False, nanos: bool = False,
              link_type: int = 1, snaplen: int = 262144) -> bytes:  # fmt: skip
    """A libpcap file: header with one of the four magics, then 16-byte record headers."""
    e = ">" if big else "<"
    magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, link_type)]
    for p in packets:
        seconds, ns = divmod(p.ts_ns, 1_000_000_000)
        fraction = ns if nanos else ns // 1000
        out.append(struct.pack(e + "IIII", seconds, fraction, len(p.data), p.wire_len) + p.data)
    return b"".join(out)


def _options(e: str, options: list[tuple[int, bytes]]) -> bytes:
    if not options:
        return b""
    out = b""
    for code, value in options:
        out += struct.pack(e + "HH", code, len(value)) + value + b"\x00" * (-len(value) % 4)
    return out + struct.pack(e + "HH", 0, 0)


def block(e: str, block_type: int, body: bytes) -> bytes:
    """One pcapng block (§3.1): type, total length, body padded to 4, total length again."""
    body += b"\x00" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack(e + "II", block_type, length) + body + struct.pack(e + "I", length)


@dataclass
class Interface:
    link_type: int = 1
    snaplen: int = 0
    tsresol: int | None = None  # if_tsresol byte; None: default (µs)
    tsoffset: int | None = None  # if_tsoffset, seconds
    comment: str | None = None

    def units(self, ts_ns: int) -> int:
        """``ts_ns`` in this interface's timestamp units (exact for the resolutions tested)."""
        resol = 6 if self.tsresol is None else self.tsresol
        ts_ns -= (self.tsoffset or 0) * 1_000_000_000
        if resol & 0x80:
            return ts_ns * (1 << (resol & 0x7F)) // 1_000_000_000
        exponent = resol - 9
        scale: int = 10 ** abs(exponent)
        return ts_ns * scale if exponent >= 0 else ts_ns // scale


@dataclass
class Section:
    interfaces: list[Interface]
    packets: list[Packet]
    big: bool = False
    comment: str | None = None
    packet_block: str = "epb"  # "epb", "opb" or "spb"
    extra_blocks: list[tuple[int, bytes]] = field(default_factory=list)  # written after the IDBs


def pcapng_file(sections: list[Section]) -> bytes:
    out = []
    for s in sections:
        e = ">" if s.big else "<"
        shb_options = _options(e, [(1, s.comment.encode())] if s.comment else [])
        out.append(
            block(e, 0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1) + shb_options)
        )
        for i in s.interfaces:
            options: list[tuple[int, bytes]] = []
            if i.comment:
                options.append((1, i.comment.encode()))
            if i.tsresol is not None:
                options.append((9, bytes([i.tsresol])))
            if i.tsoffset is not None:
                options.append((14, struct.pack(e + "q", i.tsoffset)))
            out.append(
                block(
                    e, 1, struct.pack(e + "HHI", i.link_type, 0, i.snaplen) + _options(e, options)
                )
            )
        for block_type, body in s.extra_blocks:
            out.append(block(e, block_type, body))
        for p in s.packets:
            units = s.interfaces[p.interface].units(p.ts_ns)
            data = p.data + b"\x00" * (-len(p.data) % 4)
            packet_options = _options(e, [(1, p.comment.encode())] if p.comment else [])
            if s.packet_block == "spb":
                out.append(block(e, 3, struct.pack(e + "I", p.wire_len) + data))
                continue
            head = (
                struct.pack(e + "I", p.interface)
                if s.packet_block == "epb"
                else struct.pack(e + "HH", p.interface, 0)
            )
            body = head + struct.pack(
                e + "IIII", units >> 32, units & 0xFFFFFFFF, len(p.data), p.wire_len
            )
            out.append(block(e, 6 if s.packet_block == "epb" else 2, body + data + packet_options))
    return b"".join(out)
