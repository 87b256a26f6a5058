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
"""

from __future__ import annotations

import mmap
import os
import stat
import threading
from typing import BinaryIO

from tcplens.capture.compression import SNIFF_BYTES, sniff_format

MIN_BYTES = 8 << 20  # a smaller file is walked in a few ms: no helper thread
STEP_PAGES = 8192  # pages touched between two checks (32 MiB: a few ms of faults)


class MappedAhead:
    """An uncompressed regular pcap/pcapng file, open and mapped, whose pages a helper thread
    maps in until the reader takes them (``take``); ``open_capture`` accepts it as a source."""

    def __init__(self, file: BinaryIO, mapping: mmap.mmap) -> None:
        self.file = file
        self._mapping: mmap.mmap | None = mapping
        self._stop = False
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
        mapping = None
        try:
            info = os.fstat(fd)
            if (
                stat.S_ISREG(info.st_mode)
                and info.st_size >= MIN_BYTES
                and sniff_format(os.pread(fd, SNIFF_BYTES, 0)) in ("pcap", "pcapng")
            ):
                os.set_blocking(fd, True)
                mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except OSError:
            pass
        if mapping is None:
            os.close(fd)
            return None
        file: BinaryIO = open(fd, "rb", buffering=0)  # noqa: SIM115 (owned by the result)
        return cls(file, mapping)

    def _touch(self) -> None:
        import numpy as np

        mapping = self._mapping
        if mapping is None:
            return
        pages = np.frombuffer(mapping, np.uint8)[:: mmap.PAGESIZE]
        for first in range(0, pages.shape[0], STEP_PAGES):
            if self._stop:
                break
            np.bitwise_or.reduce(pages[first : first + STEP_PAGES])
        del pages  # no view left on the mapping: it can be closed

    def take(self) -> mmap.mmap:
        """Stop the helper (after its current step) and hand over the mapping, once."""
        self._stop = True
        self._thread.join()
        mapping, self._mapping = self._mapping, None
        if mapping is None:
            raise ValueError("the mapping was already taken")
        return mapping
