"""``read_capture``: the capture's bytes, window by window, through the compiled passes.

The file is never held whole in Python memory. A format walker (``pcap``/``pcapng``) finds the
packet records in the current window of bytes and writes their timestamps and lengths straight
into the table's columns; the decoder (``decode``) then fills the protocol columns. A mapped file
is counted first so the table is allocated once, exactly; a stream (compressed, or not a regular
file) is counted window by window and the pieces are joined at the end.
"""

from __future__ import annotations

import os
from typing import BinaryIO

import numpy as np

from tcplens.capture.addresses import AddressBook, resolve_misses
from tcplens.capture.buffers import MAX_HELD, CaptureBuffer, MappedBuffer
from tcplens.capture.clock import clock_warning, steps_of_parts
from tcplens.capture.columns import (
    DecodeScratch,
    TableColumns,
    allocate_columns,
    join_pieces,
)
from tcplens.capture.compression import DEFAULT_MAX_BYTES, sniff_format
from tcplens.capture.copies import mark_copies
from tcplens.capture.decode import decode_packets
from tcplens.capture.dns import DnsCollector
from tcplens.capture.errors import CompressionError, MalformedCaptureError, NotACaptureError
from tcplens.capture.formats import FILE_HEADER_LEN, parse_file_header
from tcplens.capture.link import DECODED_LINK_TYPES
from tcplens.capture.memory import anonymous_memory
from tcplens.capture.pcap import PcapWalker
from tcplens.capture.pcap_walk import walk_pcap
from tcplens.capture.pcapng import PcapngWalker
from tcplens.capture.pcapng_walk import PcapngWalk, walk_pcapng
from tcplens.capture.progress import ProgressCallback, ReadProgress
from tcplens.capture.records import (
    BAD_REASONS,
    STOP_BAD,
    STOP_FULL,
    STOP_SKIP,
    IndexedRecords,
    RecordColumns,
    RecordIndex,
)
from tcplens.capture.source import open_capture
from tcplens.capture.table import (
    MAX_SACK_BLOCKS,
    U32,
    UNSUPPORTED_LINK,
    Capture,
    CaptureInfo,
    PacketTable,
)
from tcplens.capture.undecoded import UndecodedCount

_BLOCK_TOO_LARGE = -1
# bytes per record assumed when sizing a pcap's index (Ethernet's minimum frame is 60 + 16):
# the address space reserved stays an eighth of the file's instead of half (the analysis runs
# under an address-space limit)
_TYPICAL_RECORD = 64
_INDEX_SLACK = 1024
_PARTS = 32  # rows of a chunk are decoded in this many parts (on all cores, whatever their number)
# rows decoded per call: ~54 MiB of a bulk capture, ~4 ms, in parts of 2^14 rows that the
# workers take one at a time. Each call of a parallel kernel costs ~0.1-0.25 ms of CPU on this
# VM (waking the worker threads and parking them again), and the reading thread's bookkeeping
# between calls leaves the workers waiting: 2^19 rows a call instead of 2^18 took the decoding
# at bulk_5M from 117-164 to 109-123 ms (6 runs each, medians 119.5 → 111.5). The first chunk,
# decoded while the address book is empty, stays one part of 2^14 rows (one mark: see
# ``records.chunks_from_marks``)
DECODE_CHUNK = 1 << 19


def read_capture(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    progress: ProgressCallback | None = None,
) -> Capture:
    """Read a pcap or pcapng capture (optionally gzip- or zstd-compressed) into columns.

    Raises a ``CaptureError`` (with a stable ``code``) for anything that is not a readable
    capture; a capture cut short is read up to the cut, with ``info.truncated`` and a warning.
    ``progress(bytes_done, bytes_total)`` is called now and then while reading (see
    ``capture.progress``); an exception it raises stops the read and propagates.
    """
    with open_capture(source, max_bytes) as buffer:
        head = bytes(buffer.buf[: min(buffer.fill, FILE_HEADER_LEN)])
        kind = sniff_format(head)
        if kind == "pcap":
            walker: PcapWalker | PcapngWalker = PcapWalker(parse_file_header(head))
        elif kind == "pcapng":
            walker = PcapngWalker()
        elif buffer.problem is not None and buffer.fill < FILE_HEADER_LEN:
            raise CompressionError(f"{buffer.problem}, before the capture inside it starts.")
        else:
            raise NotACaptureError(
                f"The {buffer.compression} file does not contain a pcap or pcapng capture."
            )
        reading = _Reading(buffer, walker, ReadProgress(progress, buffer.source_size))
        packets = reading.run()
        dns = reading.dns.table(packets)
        reading.progress.finish(buffer.source_done(buffer.fill))
    if not set(walker.link_types()) <= set(DECODED_LINK_TYPES):  # else no per-packet pass
        _warn_unsupported_links(packets, reading.warnings)
    undecoded = reading.undecoded.warning()
    copies = mark_copies(packets)
    clock = clock_warning(packets.ts_ns, packets.clock_step_rows)
    reading.warnings += [w for w in (undecoded, copies, clock) if w is not None]
    info = CaptureInfo(
        format=kind,
        compression=buffer.compression,
        packets=len(packets),
        link_types=walker.link_types(),
        first_ts_ns=reading.earliest if len(packets) else None,
        last_ts_ns=reading.latest if len(packets) else None,
        truncated=reading.truncated,
        warnings=tuple(reading.warnings),
        comments=tuple(reading.comments),
    )
    return Capture(packets=packets, dns=dns, info=info)


class _Reading:
    """One read of one capture: the loop over windows and what it found."""

    def __init__(
        self, buffer: CaptureBuffer, walker: PcapWalker | PcapngWalker, progress: ReadProgress
    ) -> None:
        self.buffer = buffer
        self.walker = walker
        self.progress = progress
        self.rows = 0
        self.earliest = self.latest = 0  # the decoded packets' first and last timestamps
        self.truncated = False
        self.warnings: list[str] = []
        self.comments: list[str] = []
        self.dns = DnsCollector()
        self.undecoded = UndecodedCount()
        self.addresses = AddressBook()
        self.clock_steps: list[int] = []  # the rows where the clock steps (``clock``)
        self.last_ts = 0  # the time of the last row decoded
        self.final: TableColumns | None = None
        self.pieces: list[TableColumns] = []
        self.pcap = isinstance(walker, PcapWalker)  # one link type: no per-packet link columns

    def run(self) -> PacketTable:
        buffer, walker = self.buffer, self.walker
        pos = walker.start
        if isinstance(buffer, MappedBuffer):
            if isinstance(walker, PcapWalker):
                buffer.widen()  # one window, the whole file: its walk counts the records
            else:
                pos = self._pcapng_run(buffer, walker)
        while True:
            if isinstance(walker, PcapWalker):
                n, pos, stop, info = self._index_window(walker, pos)
            else:
                n, pos, stop, info = self._fill_window(walker, pos)
            self.comments += walker.take_comments(buffer.buf, self.rows + 1)
            self.rows += n
            self.progress.update(buffer.source_done(pos))
            if stop == STOP_FULL:
                if n == 0:  # the count and the walk disagree: keep what we have
                    break
                continue
            if stop == STOP_BAD:
                self._stop_at_corruption(pos, info)
                break
            if stop == STOP_SKIP:
                start = buffer.base + pos
                if not buffer.skip(pos, info):
                    self._ends_inside(start)
                    break
                pos = 0
                continue
            if buffer.eof:  # STOP_NEED_MORE and nothing more to read
                if pos < buffer.fill:
                    self._ends_inside(buffer.base + pos)
                break
            if info > MAX_HELD:
                self._stop_at_corruption(pos, _BLOCK_TOO_LARGE)
                break
            buffer.advance(pos, info)
            pos = 0
        if buffer.problem is not None:
            self.truncated = True
            self.warnings.append(
                f"{buffer.problem}: the capture is cut at byte {buffer.base + buffer.fill:,} "
                f"and the {self.rows:,} packets before are analysed."
            )
        return self._table()

    def _pcapng_run(self, buffer: MappedBuffer, walker: PcapngWalker) -> int:
        """A mapped pcapng: the run of packet blocks after its headers walked and decoded on all
        cores (``pcapng_walk``), into a table allocated for it and for the rest of the file,
        counted by the serial walk; returns where in the window the serial walk goes on."""
        buffer.widen()
        first = walker.headers(buffer.buf, buffer.fill)
        if first < 0:  # no packet block, or the headers stop the read: all of it is serial
            first = walker.start
            walk = None
        else:
            self.comments += walker.take_comments(buffer.buf, 1)
            s = walker.state
            walk = walk_pcapng(
                buffer.buf, first, buffer.fill, s.big, s.section_base, s.interfaces,
                s.if_tsresol, s.if_tsoffset, mark_every=max(1, DECODE_CHUNK // _PARTS),
            )  # fmt: skip
            first = walk.pos
        rows = 0 if walk is None else walk.rows
        # the walked rows' pages are first touched by the decoding, on all cores
        self.final = allocate_columns(
            rows + walker.count(buffer.buf, first, buffer.fill), self.pcap, populate=rows == 0
        )
        if walk is not None and rows:
            lengths = np.empty((2, min(rows, DECODE_CHUNK)), np.uint32)
            self._decode(self.final, walk, rows, lengths)
            walker.carry_time(int(self.final.dense["ts_ns"][rows - 1]))  # for a following SPB
            self.rows = rows
            self.progress.update(buffer.source_done(first))
        buffer.advance(first, 0)  # windows again, for the serial walk
        return 0

    def _index_window(self, walker: PcapWalker, pos: int) -> tuple[int, int, int, int]:
        """pcap: index the window's records, then allocate exactly and decode them."""
        buffer = self.buffer
        if isinstance(buffer, MappedBuffer):  # the whole file, walked on all cores
            every = max(1, DECODE_CHUNK // _PARTS)  # the decoder's parts start at the marks
            walk = walk_pcap(buffer.buf, pos, buffer.fill, walker.header, mark_every=every)
            # the file's pages stay mapped from the walk to the decoding, and are dropped behind
            # it, a chunk at a time: resident memory peaks at the table plus the file as decoding
            # starts (bulk_5M: 1061 MiB, 2.1x the file, +13 MiB on the whole run's peak), and the
            # decoding does not fault them in again (0.04 s of system time at 5M). The table's
            # pages are first touched by the decoding, which runs on all cores
            columns = allocate_columns(walk.rows, self.pcap, populate=False)
            self.pieces.append(columns)
            self._decode(columns, walk, walk.rows, _NO_LENGTHS)
            return walk.rows, walk.pos, walk.stop, walk.info
        most = buffer.fill // walker.min_record + 1  # records of headers only
        first = min(most, buffer.fill // _TYPICAL_RECORD + _INDEX_SLACK)
        # no huge pages (see ``allocate_columns``)
        data_offset = anonymous_memory(8 * first).view(np.int64)
        n, pos, stop, info = walker.index(buffer.buf, pos, buffer.fill, data_offset)
        while stop == STOP_FULL:  # smaller records than usual: a larger index, rarely
            grown = anonymous_memory(8 * min(most, 2 * data_offset.shape[0])).view(np.int64)
            grown[:n] = data_offset[:n]
            data_offset = grown
            more, pos, stop, info = walker.index(buffer.buf, pos, buffer.fill, data_offset[n:])
            n += more
        columns = allocate_columns(n, self.pcap)
        self.pieces.append(columns)
        self._decode(columns, IndexedRecords(data_offset), n, _NO_LENGTHS)
        return n, pos, stop, info

    def _fill_window(self, walker: PcapngWalker, pos: int) -> tuple[int, int, int, int]:
        """pcapng: walk the window's blocks into the counted table (or a piece), then decode."""
        buffer = self.buffer
        columns = self._room(pos)
        dense = columns.dense
        room = min(len(dense["status"]), buffer.fill // walker.min_record + 1)
        data_offset = np.empty(room, np.int64)
        # the lengths in full, for the decoder to store (see ``PacketTable.caplen16``)
        lengths = np.empty((2, room), np.uint32)
        records = RecordColumns(dense["ts_ns"], lengths[0], lengths[1], dense["interface"])
        n, pos, stop, info = walker.fill(buffer.buf, pos, buffer.fill, records, data_offset)
        self._decode(columns, IndexedRecords(data_offset), n, lengths)
        return n, pos, stop, info

    def _room(self, pos: int) -> TableColumns:
        """Columns for the records of the current window: a view on the table, or a new piece."""
        if self.final is not None:
            return self.final.rows_from(self.rows)
        assert isinstance(self.walker, PcapngWalker)  # pcap windows are indexed, not counted
        piece = allocate_columns(
            self.walker.count(self.buffer.buf, pos, self.buffer.fill), self.pcap
        )
        self.pieces.append(piece)
        return piece

    def _decode(self, columns: TableColumns, index: RecordIndex, n: int, lengths: U32) -> None:
        """Decode rows ``[0, n)`` of ``columns`` on all cores, a chunk of rows at a time.

        ``lengths``: each row's captured and wire length, shape (2, n), if the walker found them
        (pcapng); else the decoder reads them from the record headers. With a ``PcapngWalk``,
        the chunk's records are walked first, on all cores, and ``lengths`` is their scratch.

        Between chunks (from Python, never per packet): DNS messages, progress, and the mapped
        file's pages of the decoded chunk dropped from the process (``release_before``).
        """
        buffer, walker = self.buffer, self.walker
        chunks = index.chunks(n, np.empty(min(n, DECODE_CHUNK), np.int64), DECODE_CHUNK, _PARTS)
        scratch = DecodeScratch.for_chunks(chunks)
        pcap = walker.header if isinstance(walker, PcapWalker) else None
        big = pcap is not None and pcap.big_endian
        nanoseconds = pcap is not None and pcap.nanoseconds
        book = self.addresses
        handshake, blocks, long = columns.handshake, columns.sack_blocks, columns.long_lengths
        tunnels = columns.tunnels
        for chunk in chunks:
            first, last, offsets = chunk.first, chunk.last, chunk.offsets
            c = {name: column[first:last] for name, column in columns.dense.items()}
            k = chunk.part_first.shape[0] - 1
            (
                misses, miss_row, miss_key, ts_bounds, steps, dns_count, dns, undecoded,
                undecoded_n,
            ) = scratch.parts(k)  # fmt: skip
            if isinstance(index, PcapngWalk):
                walked = index.fill(buffer.buf, chunk, c["ts_ns"], c["interface"], lengths)
            else:
                walked = lengths[:, first:last]
            h = handshake.room(last - first)
            b = blocks.room(MAX_SACK_BLOCKS * (last - first))
            g = long.room(last - first)
            t = tunnels.room(last - first)
            handshake.fill, blocks.fill, long.fill, tunnels.fill = decode_packets(
                buffer.buf, offsets, chunk.part_first, chunk.part_pos, walker.record_header, big,
                nanoseconds, walker.if_link,
                self.rows + first, c["ts_ns"], c.get("interface", _UNUSED), walked[0], walked[1],
                c.get("link_type", _UNUSED), c["status"], c["ip_version"],
                c["src_id"], c["dst_id"], c["ip_proto"], c["caplen16"], c["origlen16"],
                c["src_port"],
                c["dst_port"], c["tcp_seq"], c["tcp_ack"], c["tcp_flags"], c["tcp_window"],
                c["tcp_hdr_len"], c["tcp_payload_len16"], c["tcp_options"], c["ts_val"],
                c["ts_ecr"], c["ip_id"], c["tcp_checksum"], ts_bounds, steps, self.last_ts,
                dns_count, dns[0], dns[1], dns[2], book.slots, book.keys,
                misses, miss_row,
                miss_key, handshake.fill, h["handshake_rows"], h["handshake_mss"],
                h["handshake_wscale"], h["handshake_sack_perm"], blocks.fill, b["sack_block_row"],
                b["sack_block_left"], b["sack_block_right"], long.fill, g["long_rows"],
                g["long_caplen"], g["long_origlen"], g["long_payload"], tunnels.fill,
                t["tunnel_rows"], t["tunnel_layers"], undecoded, undecoded_n,
            )  # fmt: skip
            self.undecoded.add(undecoded, undecoded_n)
            self.clock_steps += steps_of_parts(chunk.part_first, steps, self.rows + first)
            if last > first:
                self.last_ts = int(c["ts_ns"][last - first - 1])
            earliest, latest = int(ts_bounds[:, 0].min()), int(ts_bounds[:, 1].max())
            if self.rows + first == 0:
                self.earliest, self.latest = earliest, latest
            else:
                self.earliest = min(self.earliest, earliest)
                self.latest = max(self.latest, latest)
            missed = int(misses.sum())
            if missed:  # new addresses, in row order (few after the first chunk)
                book.reserve(missed)
                book.count = resolve_misses(
                    book.slots, book.keys, book.count, misses, miss_row, miss_key,
                    c["src_id"], c["dst_id"],
                )  # fmt: skip
            if dns_count.any():  # per part, not per packet
                found = [dns[:, q, : dns_count[q]] for q in range(k)]
                rows, payload, frame_end = np.concatenate(found, axis=1)
                self.dns.collect(buffer.buf, rows + (self.rows + first), payload, frame_end)
            buffer.release_before(buffer.base + int(offsets[-1]) - walker.record_header)
            self.progress.update(buffer.source_done(int(offsets[-1])))

    def _ends_inside(self, record_start: int) -> None:
        end = self.buffer.base + self.buffer.fill
        if record_start == 0:  # not even the pcapng section header is complete
            raise MalformedCaptureError(
                f"The capture ends at byte {end:,}, inside its first section header."
            )
        self.truncated = True
        self.warnings.append(
            f"The capture ends at byte {end:,}, inside a record that starts at byte "
            f"{record_start:,}; the {self.rows:,} packets before it are analysed."
        )

    def _stop_at_corruption(self, pos: int, reason: int) -> None:
        why = BAD_REASONS.get(reason, f"a pcapng block is larger than {MAX_HELD:,} bytes")
        where = self.buffer.base + pos
        if self.rows == 0:
            raise MalformedCaptureError(f"The capture is malformed at byte {where:,}: {why}.")
        self.truncated = True
        self.warnings.append(
            f"Reading stopped at byte {where:,} because {why}; "
            f"the {self.rows:,} packets before it are analysed."
        )

    def _table(self) -> PacketTable:
        if self.final is not None:
            final, self.final = self.final, None
            columns = {name: column[: self.rows] for name, column in final.dense.items()}
            columns |= final.entries()
        else:
            columns = join_pieces(self.pieces)
        if self.pcap:  # one interface, one link type: the same value for every packet
            link = int(self.walker.if_link[0])
            columns["interface"] = np.broadcast_to(np.uint16(0), (self.rows,))
            columns["link_type"] = np.broadcast_to(np.uint16(link), (self.rows,))
        columns["clock_step_rows"] = np.array(self.clock_steps, np.uint32)
        return PacketTable(**columns, addresses=self.addresses.table())


_UNUSED = np.zeros(0, np.uint16)  # what the decoder gets for the columns a pcap has not
_NO_LENGTHS = np.zeros((2, 0), np.uint32)  # a pcap's lengths are in its record headers


def _warn_unsupported_links(packets: PacketTable, warnings: list[str]) -> None:
    unsupported = packets.link_type[(packets.status & UNSUPPORTED_LINK) != 0]
    if unsupported.shape[0] == 0:
        return
    types, counts = np.unique(unsupported, return_counts=True)
    decoded = ", ".join(map(str, DECODED_LINK_TYPES))
    for link, count in zip(types.tolist(), counts.tolist(), strict=True):
        packets_word = "packet has" if count == 1 else "packets have"
        warnings.append(
            f"{count:,} {packets_word} link type {link}, which tcplens does not decode "
            f"(it reads {decoded}): counted, not analysed."
        )
