"""``read_capture``: the (decompressed) file, buffer by buffer, through the compiled passes.

The file is never held whole: it is read into one reusable buffer (8 MiB); a format walker
(``pcap``/``pcapng``) indexes the complete records in it, the decoder turns them into columns,
and the incomplete record at the end is moved to the front before the next read. Memory is the
table plus one buffer, whatever the file size.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, BinaryIO

import numpy as np

from tcplens.capture import pcap, pcapng
from tcplens.capture.compression import BoundedStream, sniff_format
from tcplens.capture.decode import decode_packets
from tcplens.capture.errors import MalformedCaptureError, NotACaptureError
from tcplens.capture.link import DECODED_LINK_TYPES
from tcplens.capture.records import (
    BAD_REASONS,
    MAX_RECORD,
    STOP_BAD,
    STOP_FULL,
    STOP_SKIP,
    RecordIndex,
)
from tcplens.capture.source import open_capture_stream
from tcplens.capture.table import (
    MAX_SACK_BLOCKS,
    UNSUPPORTED_LINK,
    Capture,
    CaptureInfo,
    PacketTable,
)

DEFAULT_MAX_BYTES = 4 << 30  # 4 GiB of (decompressed) capture
BUFFER_SIZE = 8 << 20
MAX_BLOCK = 16 << 20  # the largest pcapng block we hold whole (packets are ≤ 256 KiB + options)


@dataclass
class _Walk:
    """The state of one read: where we are in the stream, what we found so far."""

    stream: BoundedStream
    buf: Any
    fill: int = 0
    base: int = 0  # stream offset of buf[0]
    eof: bool = False
    pieces: list[dict[str, Any]] = field(default_factory=list)
    packets: int = 0
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def refill(self, pos: int, needed: int) -> int:
        """Move ``buf[pos:fill]`` to the front and read more; returns the new ``pos`` (0)."""
        remaining = self.fill - pos
        self.buf[:remaining] = self.buf[pos : self.fill]
        self.base += pos
        self.fill = remaining
        if needed > self.buf.shape[0]:
            grown = np.empty(needed, np.uint8)
            grown[:remaining] = self.buf[:remaining]
            self.buf = grown
        want = self.buf.shape[0] - self.fill
        got = self.stream.readinto(memoryview(self.buf)[self.fill :])
        self.fill += got
        self.eof = got < want
        return 0

    def skip(self, pos: int, length: int) -> None:
        """Drop ``length`` bytes from ``pos`` on, reading through the stream if needed."""
        in_buffer = self.fill - pos
        to_drop = length - in_buffer
        self.base += self.fill
        self.fill = 0
        while to_drop > 0 and not self.eof:
            view = memoryview(self.buf)[: min(to_drop, self.buf.shape[0])]
            got = self.stream.readinto(view)
            self.eof = got < len(view)
            self.base += got
            to_drop -= got
        if to_drop > 0:
            self._ends_inside(self.base - (length - to_drop) + 0, self.base)
        else:
            # continue right after the skipped block
            self.base += 0

    def _ends_inside(self, record_start: int, file_end: int) -> None:
        self.truncated = True
        self.warnings.append(
            f"The capture ends at byte {file_end:,}, inside a record that starts at byte "
            f"{record_start:,}; the {self.packets:,} packets before it are analysed."
        )


def read_capture(
    source: str | os.PathLike[str] | BinaryIO, *, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> Capture:
    """Read a pcap or pcapng capture (optionally gzip- or zstd-compressed) into columns.

    Raises a ``CaptureError`` (with a stable ``code``) for anything that is not a readable
    capture; a capture cut short is read up to the cut, with ``info.truncated`` and a warning.
    """
    with open_capture_stream(source, max_bytes) as stream:
        walk = _Walk(stream, np.empty(BUFFER_SIZE, np.uint8))
        walk.refill(0, 0)
        kind = sniff_format(walk.buf[:4].tobytes())
        if kind not in ("pcap", "pcapng"):
            raise NotACaptureError(
                f"The {stream.compression} file does not contain a pcap or pcapng capture."
            )
        link_types = _walk_pcap(walk) if kind == "pcap" else _walk_pcapng(walk)
        packets = _concatenate(walk.pieces, walk.packets)
    _warn_unsupported_links(packets, walk.warnings)
    ts = packets.ts_ns
    info = CaptureInfo(
        format=kind,
        compression=stream.compression,
        packets=len(packets),
        link_types=link_types,
        first_ts_ns=int(ts.min()) if len(ts) else None,
        last_ts_ns=int(ts.max()) if len(ts) else None,
        truncated=walk.truncated,
        warnings=tuple(walk.warnings),
        comments=tuple(walk.comments),
    )
    from tcplens.capture.dns import empty_dns_table

    return Capture(packets=packets, dns=empty_dns_table(), info=info)


def _walk_pcap(walk: _Walk) -> tuple[int, ...]:
    header = pcap.parse_file_header(walk.buf[: min(walk.fill, pcap.FILE_HEADER_LEN)].tobytes())
    index = RecordIndex.for_buffer(walk.buf.shape[0], pcap.RECORD_HEADER_LEN)
    link_of_interface = np.array([header.link_type], np.uint16)
    pos = pcap.FILE_HEADER_LEN
    while True:
        if index.data_offset.shape[0] < walk.buf.shape[0] // pcap.RECORD_HEADER_LEN + 1:
            index = RecordIndex.for_buffer(walk.buf.shape[0], pcap.RECORD_HEADER_LEN)
        n, pos, stop, info = pcap.walk_pcap_records(
            walk.buf, pos, walk.fill, header.big_endian, header.nanoseconds,
            index.data_offset, index.caplen, index.origlen, index.ts_ns,
        )  # fmt: skip
        _decode(walk, index, n, link_of_interface)
        if stop == STOP_FULL:
            continue
        if stop == STOP_BAD:
            _stop_at_corruption(walk, pos, info)
            break
        if walk.eof:
            if pos < walk.fill:
                walk._ends_inside(walk.base + pos, walk.base + walk.fill)
            break
        pos = walk.refill(pos, info)
    return (header.link_type,)


def _walk_pcapng(walk: _Walk) -> tuple[int, ...]:
    state = pcapng.PcapngState()
    index = RecordIndex.for_buffer(walk.buf.shape[0], pcapng.MIN_SPB)
    pos = 0
    while True:
        if index.data_offset.shape[0] < walk.buf.shape[0] // pcapng.MIN_SPB + 1:
            index = RecordIndex.for_buffer(walk.buf.shape[0], pcapng.MIN_SPB)
        n, pos, stop, info = pcapng.walk_pcapng_blocks(
            walk.buf, pos, walk.fill,
            state.state, state.if_link, state.if_snaplen, state.if_tsresol, state.if_tsoffset,
            state.comment_pos, state.comment_len, state.comment_row,
            index.data_offset, index.caplen, index.origlen, index.ts_ns, index.interface,
        )  # fmt: skip
        _keep_comments(walk, state)
        _decode(walk, index, n, state.if_link)
        if stop == STOP_FULL:
            continue
        if stop == STOP_BAD:
            _stop_at_corruption(walk, pos, info)
            break
        if stop == STOP_SKIP:
            walk.skip(pos, info)
            if walk.truncated:
                break
            pos = walk.refill(0, 0)
            if walk.fill == 0:
                break
            continue
        if walk.eof:
            if pos < walk.fill:
                walk._ends_inside(walk.base + pos, walk.base + walk.fill)
            break
        if info > MAX_BLOCK:
            _stop_at_corruption(walk, pos, -1)
            break
        pos = walk.refill(pos, info)
    return tuple(sorted({int(t) for t in state.if_link[: state.interfaces]}))


def _keep_comments(walk: _Walk, state: pcapng.PcapngState) -> None:
    found = int(state.state[pcapng.ST_COMMENTS])
    for k in range(found):  # a handful per capture: SHB/IDB/packet comments, capped per buffer
        start = int(state.comment_pos[k])
        text = walk.buf[start : start + int(state.comment_len[k])].tobytes()
        text_str = text.decode("utf-8", "replace").rstrip("\x00")
        row = int(state.comment_row[k])
        walk.comments.append(text_str if row < 0 else f"frame {walk.packets + row + 1}: {text_str}")
    state.state[pcapng.ST_COMMENTS] = 0


def _stop_at_corruption(walk: _Walk, pos: int, reason: int) -> None:
    why = BAD_REASONS.get(reason, f"a pcapng block is larger than {MAX_BLOCK:,} bytes")
    where = walk.base + pos
    if walk.packets == 0:
        raise MalformedCaptureError(f"The capture is malformed at byte {where:,}: {why}.")
    walk.truncated = True
    walk.warnings.append(
        f"Reading stopped at byte {where:,} because {why}; "
        f"the {walk.packets:,} packets before it are analysed."
    )


def _columns(n: int) -> dict[str, Any]:
    """Zeroed columns for ``n`` packets (calloc: pages untouched until written)."""
    return {
        "status": np.zeros(n, np.uint8),
        "ip_version": np.zeros(n, np.uint8),
        "src_addr": np.zeros((n, 16), np.uint8),
        "dst_addr": np.zeros((n, 16), np.uint8),
        "ip_proto": np.zeros(n, np.uint8),
        "ip_total_len": np.zeros(n, np.uint32),
        "src_port": np.zeros(n, np.uint16),
        "dst_port": np.zeros(n, np.uint16),
        "tcp_seq": np.zeros(n, np.uint32),
        "tcp_ack": np.zeros(n, np.uint32),
        "tcp_flags": np.zeros(n, np.uint16),
        "tcp_window": np.zeros(n, np.uint16),
        "tcp_hdr_len": np.zeros(n, np.uint8),
        "tcp_payload_len": np.zeros(n, np.uint32),
        "mss": np.full(n, -1, np.int32),
        "wscale": np.full(n, -1, np.int8),
        "sack_perm": np.zeros(n, np.bool_),
        "sack_count": np.zeros(n, np.uint8),
        "sack_left": np.zeros((n, MAX_SACK_BLOCKS), np.uint32),
        "sack_right": np.zeros((n, MAX_SACK_BLOCKS), np.uint32),
        "has_ts": np.zeros(n, np.bool_),
        "ts_val": np.zeros(n, np.uint32),
        "ts_ecr": np.zeros(n, np.uint32),
    }


def _decode(walk: _Walk, index: RecordIndex, n: int, link_of_interface: Any) -> None:
    if n == 0:
        return
    cols = _columns(n)
    interface = index.interface[:n].copy()
    link_type = link_of_interface[interface]
    udp_payload = np.full(n, -1, np.int64)
    decode_packets(
        walk.buf, index.data_offset[:n], index.caplen[:n], index.origlen[:n], link_type,
        cols["status"], cols["ip_version"], cols["src_addr"], cols["dst_addr"], cols["ip_proto"],
        cols["ip_total_len"], cols["src_port"], cols["dst_port"], cols["tcp_seq"], cols["tcp_ack"],
        cols["tcp_flags"], cols["tcp_window"], cols["tcp_hdr_len"], cols["tcp_payload_len"],
        cols["mss"], cols["wscale"], cols["sack_perm"], cols["sack_count"], cols["sack_left"],
        cols["sack_right"], cols["has_ts"], cols["ts_val"], cols["ts_ecr"], udp_payload,
    )  # fmt: skip
    cols["ts_ns"] = index.ts_ns[:n].copy()
    cols["interface"] = interface
    cols["link_type"] = link_type
    cols["caplen"] = index.caplen[:n].copy()
    cols["origlen"] = index.origlen[:n].copy()
    walk.pieces.append(cols)
    walk.packets += n


def _concatenate(pieces: list[dict[str, Any]], n: int) -> PacketTable:
    """One table from the per-buffer pieces, column by column, freeing each piece's column."""
    columns: dict[str, Any] = {"frame": np.arange(1, n + 1, dtype=np.uint32)}
    if not pieces:
        pieces = [{**_columns(0), **_empty_record_columns()}]
    for f in fields(PacketTable):
        if f.name == "frame":
            continue
        parts = [piece.pop(f.name) for piece in pieces]
        columns[f.name] = parts[0] if len(parts) == 1 else np.concatenate(parts)
        del parts
    return PacketTable(**columns)


def _empty_record_columns() -> dict[str, Any]:
    return {
        "ts_ns": np.zeros(0, np.int64),
        "interface": np.zeros(0, np.uint16),
        "link_type": np.zeros(0, np.uint16),
        "caplen": np.zeros(0, np.uint32),
        "origlen": np.zeros(0, np.uint32),
    }


def _warn_unsupported_links(packets: PacketTable, warnings: list[str]) -> None:
    unsupported = packets.link_type[(packets.status & UNSUPPORTED_LINK) != 0]
    if unsupported.shape[0] == 0:
        return
    types, counts = np.unique(unsupported, return_counts=True)
    for link, count in zip(types.tolist(), counts.tolist(), strict=True):
        warnings.append(
            f"{count:,} packets have link type {link}, which tcplens does not decode "
            f"(it reads {', '.join(map(str, DECODED_LINK_TYPES))}); they are counted and skipped."
        )


__all__ = ["DEFAULT_MAX_BYTES", "MAX_RECORD", "read_capture"]
