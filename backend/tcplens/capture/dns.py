"""DNS over UDP port 53: id, query/response, rcode, first question, A/AAAA answers (RFC 1035 §4.1).

Enough to see the lookups that delay a connection (DESIGN.md: DNS delay before connecting). The
compiled pass decodes each message's header, first question and answer addresses into arrays;
names become Python strings only at the end, vectorised (the contract keeps them as objects).
"""

from __future__ import annotations

import ipaddress
from typing import Any

import numpy as np

from tcplens.capture.compiled import byte, inline_kernel, kernel, read_u16
from tcplens.capture.table import I64, U8, U16, DnsTable, PacketTable

MAX_NAME = 253  # RFC 1035 §2.3.4: 255 octets on the wire, 253 as dotted text
MAX_POINTERS = 16  # compression pointers followed per name: a loop cannot run forever
MAX_ANSWERS = 8  # A/AAAA addresses kept per response
MAX_RECORDS = 64  # answer records walked per response
TYPE_A = 1
TYPE_AAAA = 28


@inline_kernel
def _name(buf: U8, message: int, pos: int, end: int, out: U8) -> tuple[int, int]:
    """Decode the name at ``pos`` into ``out``: ``(position after it, text length)``, -1 if bad.

    Bytes outside printable ASCII become ``?`` so the text is always ASCII.
    """
    length = 0
    after = -1
    for _ in range(MAX_POINTERS + MAX_NAME):
        if pos >= end:
            return -1, length
        label = byte(buf, pos)
        if label == 0:
            return (pos + 1 if after < 0 else after), length
        if label & 0xC0 == 0xC0:  # compression pointer (§4.1.4), relative to the message
            if end - pos < 2:
                return -1, length
            if after < 0:
                after = pos + 2
            pos = message + (((label & 0x3F) << 8) | byte(buf, pos + 1))
            continue
        if label & 0xC0 or end - pos - 1 < label:
            return -1, length
        for j in range(label):
            if length >= MAX_NAME:
                return -1, length
            c = byte(buf, pos + 1 + j)
            out[length] = c if 0x21 <= c <= 0x7E else 0x3F
            length += 1
        if length < MAX_NAME:
            out[length] = 0x2E  # "."
            length += 1
        pos += 1 + label
    return -1, length


@kernel
def decode_dns(
    buf: U8, udp_payload: I64, frame_end: I64,
    dns_id: U16, flags: U16, qtype: U16, name: U8, name_len: I64, ok: U8,
    answer_bytes: U8, answer_family: U8, answer_count: U8,
) -> None:  # fmt: skip
    """Decode the DNS message at each ``udp_payload`` offset (up to the UDP or captured end)."""
    scratch = np.empty(MAX_NAME + 2, np.uint8)
    for k in range(udp_payload.shape[0]):
        start = udp_payload[k]
        end = min(frame_end[k], start - 8 + read_u16(buf, start - 4, True))
        if end - start < 12:
            continue
        dns_id[k] = read_u16(buf, start, True)
        flags[k] = read_u16(buf, start + 2, True)
        questions = read_u16(buf, start + 4, True)
        answers = read_u16(buf, start + 6, True)
        ok[k] = 1
        if questions == 0:
            continue
        pos, length = _name(buf, start, start + 12, end, name[k])
        if pos < 0 or end - pos < 4:
            continue
        name_len[k] = length - 1 if length > 0 and name[k, length - 1] == 0x2E else length
        qtype[k] = read_u16(buf, pos, True)
        pos += 4
        if questions != 1:
            continue
        for _ in range(min(answers, MAX_RECORDS)):
            pos, _unused = _name(buf, start, pos, end, scratch)
            if pos < 0 or end - pos < 10:
                break
            rtype = read_u16(buf, pos, True)
            rdlength = read_u16(buf, pos + 8, True)
            pos += 10
            if end - pos < rdlength:
                break
            n = answer_count[k]
            if n < MAX_ANSWERS and (
                (rtype == TYPE_A and rdlength == 4) or (rtype == TYPE_AAAA and rdlength == 16)
            ):
                for j in range(rdlength):
                    answer_bytes[k, n, j] = buf[pos + j]
                answer_family[k, n] = 4 if rdlength == 4 else 6
                answer_count[k] = n + 1
            pos += rdlength


class DnsCollector:
    """DNS messages found window by window, turned into a ``DnsTable`` at the end."""

    def __init__(self) -> None:
        self._parts: list[dict[str, Any]] = []

    def collect(self, buf: U8, rows: I64, payload: I64, frame_end: I64) -> None:
        """The DNS messages of the UDP port-53 packets at table ``rows``: each starts at
        ``payload`` in a frame ending at ``frame_end`` (offsets in ``buf``)."""
        m = rows.shape[0]
        if m == 0:
            return
        part: dict[str, Any] = {
            "packet_index": rows,
            "dns_id": np.zeros(m, np.uint16),
            "flags": np.zeros(m, np.uint16),
            "qtype": np.zeros(m, np.uint16),
            "name": np.zeros((m, MAX_NAME + 2), np.uint8),
            "name_len": np.zeros(m, np.int64),
            "ok": np.zeros(m, np.uint8),
            "answers": np.zeros((m, MAX_ANSWERS, 16), np.uint8),
            "family": np.zeros((m, MAX_ANSWERS), np.uint8),
            "answer_count": np.zeros(m, np.uint8),
        }
        decode_dns(
            buf, payload, frame_end, part["dns_id"], part["flags"], part["qtype"],
            part["name"], part["name_len"], part["ok"], part["answers"], part["family"],
            part["answer_count"],
        )  # fmt: skip
        keep = part["ok"] != 0
        self._parts.append({name: column[keep] for name, column in part.items()})

    def table(self, packets: PacketTable) -> DnsTable:
        """The messages found, with their packets' times and sources from ``packets``."""
        if not self._parts:
            return empty_dns_table()
        c = {name: np.concatenate([p[name] for p in self._parts]) for name in self._parts[0]}
        self._parts = []
        # names: fixed-width ASCII rows → str objects, cut at each name's length, vectorised
        width = c["name"].shape[1]
        mask = np.arange(width)[None, :] < c["name_len"][:, None]
        names = np.where(mask, c["name"], 0).view(f"S{width}").ravel()
        rows = c["packet_index"].astype(np.int64)
        return DnsTable(
            packet_index=rows,
            ts_ns=packets.ts_ns[rows],
            src_id=packets.src_id[rows],
            dns_id=c["dns_id"],
            is_response=(c["flags"] & 0x8000) != 0,
            rcode=(c["flags"] & 0x000F).astype(np.uint8),
            qtype=c["qtype"],
            qname=np.char.decode(names, "ascii").astype(np.object_),
            answer_addrs=_answer_texts(c["answers"], c["family"], c["answer_count"]),
        )


def _answer_texts(answers: Any, family: Any, count: Any) -> tuple[tuple[str, ...], ...]:
    """Textual A/AAAA answers per message; text only for the few messages that have answers."""
    texts: list[tuple[str, ...]] = [()] * int(count.shape[0])
    for k in np.flatnonzero(count).tolist():  # responses with addresses, not every packet
        texts[k] = tuple(
            str(ipaddress.IPv4Address(bytes(answers[k, j, :4])))
            if family[k, j] == 4
            else str(ipaddress.IPv6Address(bytes(answers[k, j])))
            for j in range(int(count[k]))
        )
    return tuple(texts)


def empty_dns_table() -> DnsTable:
    return DnsTable(
        packet_index=np.zeros(0, np.int64),
        ts_ns=np.zeros(0, np.int64),
        src_id=np.zeros(0, np.uint32),
        dns_id=np.zeros(0, np.uint16),
        is_response=np.zeros(0, np.bool_),
        rcode=np.zeros(0, np.uint8),
        qtype=np.zeros(0, np.uint16),
        qname=np.zeros(0, np.object_),
    )
