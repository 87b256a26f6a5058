"""A capture file mapped, and its pages mapped in, while a one-shot process is still starting.

The walk of a mapped capture (``pcap_walk``, ``pcapng_walk``) is the first pass over its bytes,
and most of its time is the kernel's: each first access to a page of the mapping faults, and the
kernel maps the page (and its neighbours, fault-around) from the page cache. bulk_5M (520 MB):
the walk on both cores 77-104 ms of wall, 46-64 ms user + 34-38 ms system; over pages already
mapped 25-30 ms. ``tcplens analyze`` spends ~0.2 s importing (numba alone ~170 ms) on one core
before it reads, while the other idles: a helper thread started first touches one byte of every
page of the mapping there, and the reader then walks mapped pages.

Touches, not ``MADV_POPULATE_READ``: a page fault takes only the mapping's own lock (per-VMA
locks, Linux 6.4+ for anonymous and 6.7+ for file memory), while a populate holds the process's
``mmap_lock`` from start to end, and every ``mmap`` of the imports (a module's shared library,
Python's arenas) waits for it (session 7: populating during the imports slowed them by 0.1 s).
numpy's strided reduction runs without the GIL; between steps the helper checks whether the
reader has taken the mapping, which stops it (the walk faults whatever is left, on all cores).

With the file's pages done, the helper makes the packet table's pages too (``memory.WarmReserve``,
sized by ``packets_estimate``): otherwise ``paging`` populates them while the decoder runs on both
cores. Nothing it imports may import numba (``formats``): it would wait for the main thread's
import of it, and the reserve was then made only as the reader took over. bulk_5M, 20 rounds of
each tree, medians, the whole program: 0.800 → 0.727 s (bulk_1M 0.509 → 0.417 s; 160-224 of the
252 MiB touched before the reader starts at 5M, all 50 at 1M). The time the imports leave is
about the same for any file, so the saving is too: it does not change the 1M-to-5M marginal rate.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import threading
from typing import TYPE_CHECKING, BinaryIO

from tcplens.capture.compression import SNIFF_BYTES, sniff_format

if TYPE_CHECKING:
    from tcplens.capture.memory import WarmReserve

MIN_BYTES = 8 << 20  # a smaller file is walked in a few ms: no helper thread
STEP_PAGES = 8192  # pages touched between two checks (32 MiB: a few ms of faults)


class MappedAhead:
    """An uncompressed regular pcap/pcapng file, open and mapped, whose pages a helper thread
    maps in until the reader takes them (``take``); ``open_capture`` accepts it as a source."""

    def __init__(self, file: BinaryIO, mapping: mmap.mmap, kind: str) -> None:
        self.file = file
        self.kind = kind  # "pcap" or "pcapng"
        self._mapping: mmap.mmap | None = mapping
        self._stop = False
        self._reading_mapping = threading.Event()  # set when the helper no longer reads it
        self._thread = threading.Thread(target=self._touch, name="tcplens-map-ahead", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, path: str | os.PathLike[str]) -> MappedAhead | None:
        """The file at ``path`` mapped ahead, or None for anything the reader would not map
        (a compressed file, a pipe, a small or unreadable file: it is opened as usual)."""
        try:  # not blocking: a named pipe would wait for a writer here (it is read as usual)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        mapping = kind = None
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_size >= MIN_BYTES:
                kind = sniff_format(os.pread(fd, SNIFF_BYTES, 0))
            if kind in ("pcap", "pcapng"):
                os.set_blocking(fd, True)
                mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except OSError:
            pass
        if mapping is None or kind is None:
            os.close(fd)
            return None
        file: BinaryIO = open(fd, "rb", buffering=0)  # noqa: SIM115 (owned by the result)
        return cls(file, mapping, kind)

    def _touch(self) -> None:
        import numpy as np

        reserve = None
        try:
            mapping = self._mapping
            if mapping is None:
                return
            pages = np.frombuffer(mapping, np.uint8)[:: mmap.PAGESIZE]
            for first in range(0, pages.shape[0], STEP_PAGES):
                if self._stop:
                    break
                np.bitwise_or.reduce(pages[first : first + STEP_PAGES])
            del pages  # no view left on the mapping: it can be closed
            if not self._stop:
                reserve = self._make_reserve(mapping)
        finally:  # the mapping read and the reserve made (or not): ``take`` may go on
            self._reading_mapping.set()
        if reserve is not None:  # the packet table's pages, in the time the imports leave
            reserve.touch(STEP_PAGES * mmap.PAGESIZE)  # (until ``take`` stops it)

    def _make_reserve(self, mapping: mmap.mmap) -> WarmReserve | None:
        """The reserve for the table of the packets ``mapping`` is estimated to hold."""
        from tcplens.capture.memory import make_warm_reserve
        from tcplens.capture.table import dense_row_bytes

        packets = packets_estimate(mapping, self.kind)
        if packets is None:
            return None
        return make_warm_reserve(packets * dense_row_bytes(pcap=self.kind == "pcap"))

    def take(self) -> mmap.mmap:
        """Stop the helper and hand over the mapping, once.

        Waits for the helper's reads of the mapping only (its last step of pages, or the
        estimate and the reserve's mapping: a few ms; a stop before them skips them, so no
        reserve is made once the reader runs, where the reader's ``release_warm_reserve``
        would miss it). A step of the reserve's pages in progress goes on alongside the
        reader's walk, which does not need them: the table takes them once it is mapped
        (``memory.WarmReserve.take_into``). Waiting for that step here (32 MiB of first
        touches, ~15-25 ms) kept the reader from starting for 2-14 ms at bulk_5M.
        """
        self._stop = True
        from tcplens.capture.memory import stop_warm_reserve

        self._reading_mapping.wait()  # after it the helper makes no reserve
        stop_warm_reserve()  # the touching ends after its step in progress
        mapping, self._mapping = self._mapping, None
        if mapping is None:
            raise ValueError("the mapping was already taken")
        return mapping


# records or blocks read from the start of a file to estimate its packets (a few ms of Python)
SAMPLE_RECORDS = 2048
# the estimate and 5 % more: the reserve's pages the table does not take are unmapped after the read
_SLACK = 1.05


def packets_estimate(data: mmap.mmap, kind: str) -> int | None:
    """About how many packets the pcap or pcapng file ``data`` holds (a little more), from the
    mean size of its first records; None if they do not parse (the reader will say why).

    For sizing the memory made ahead only: a file whose later packets are smaller than its first
    ones holds more, and the table's pages beyond the estimate are populated as they are used.
    The reader's walks are compiled kernels, not loaded yet while this runs (during the imports),
    so this reads the first records in Python, with the reader's header parser and constants
    (``formats``: nothing here may import numba, see there).
    """
    from tcplens.capture.errors import CaptureError
    from tcplens.capture.formats import (
        EPB,
        FILE_HEADER_LEN,
        MIN_BLOCK,
        OPB,
        RECORD_HEADER_LEN,
        SPB,
        parse_file_header,
    )  # fmt: skip

    size = len(data)
    pos = first = records = 0
    if kind == "pcap":
        try:
            order = ">" if parse_file_header(data[:FILE_HEADER_LEN]).big_endian else "<"
        except CaptureError:
            return None
        pos = first = FILE_HEADER_LEN
        while records < SAMPLE_RECORDS and pos + RECORD_HEADER_LEN <= size:
            pos += RECORD_HEADER_LEN + struct.unpack_from(order + "I", data, pos + 8)[0]
            records += 1
    else:  # pcapng: the first section's byte order (pcapng §4.1), as the walk reads it
        order = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
        for _ in range(SAMPLE_RECORDS):
            if pos + MIN_BLOCK > size:
                break
            block_type, length = struct.unpack_from(order + "II", data, pos)
            if length < MIN_BLOCK or length % 4:
                return None
            records += block_type in (EPB, SPB, OPB)
            pos += length
    if records == 0 or pos <= first:
        return None
    per_record = (min(pos, size) - first) / records
    return int((size - first) / per_record * _SLACK) + 1
