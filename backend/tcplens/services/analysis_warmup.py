"""Imported by the analysis fork server at its start: analyse a tiny capture once, so numba's
cached kernels are loaded in the fork server and every analysis forked from it starts warm
(otherwise each analysis process pays the cache loading again, about a second here); and tune
the C heap as ``tcplens analyze`` does (tcplens.heap), which every forked analysis inherits."""

from __future__ import annotations

import io
import logging
import struct

logger = logging.getLogger(__name__)


def _tiny_capture() -> bytes:
    """One TCP SYN in a little-endian Ethernet pcap."""
    eth = b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\x08\x00"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 1, 0, 64, 6, 0, b"\n\0\0\1", b"\n\0\0\2")
    tcp = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 0x50, 0x02, 65535, 0, 0)
    frame = eth + ip + tcp
    return (
        struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
        + struct.pack("<IIII", 1, 0, len(frame), len(frame))
        + frame
    )


def warm() -> None:
    from tcplens.capture import read_capture
    from tcplens.heap import reuse_freed_memory
    from tcplens.report import analyse_capture

    reuse_freed_memory()
    try:
        analyse_capture(read_capture(io.BytesIO(_tiny_capture())))
    except Exception:  # a failed warm-up only costs time; the real analysis reports errors
        logger.warning("analysis warm-up failed", exc_info=True)


warm()
