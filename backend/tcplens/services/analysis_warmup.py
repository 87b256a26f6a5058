"""Imported by the analysis fork server at its start: analyse a tiny capture once, so numba's
cached kernels are loaded in the fork server and every analysis forked from it starts warm
(otherwise each analysis process pays the cache loading again, about a second here); and tune
the C heap as ``tcplens analyze`` does (tcplens.heap), which every forked analysis inherits."""

from __future__ import annotations

import gc
import io
import logging
import struct

logger = logging.getLogger(__name__)


def _tiny_capture() -> bytes:
    """A handshake and one byte of data each way, in a little-endian Ethernet pcap: enough to
    load every kernel a real analysis runs (the diagnosis labels connections with payload)."""
    eth = b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\x08\x00"
    client, server = b"\n\0\0\1", b"\n\0\0\2"
    # (from client?, seq, ack, flags, payload): SYN, SYN/ACK, ACK, request, response, ACK
    packets = [
        (True, 0, 0, 0x02, b""),
        (False, 0, 1, 0x12, b""),
        (True, 1, 1, 0x10, b""),
        (True, 1, 1, 0x18, b"?"),
        (False, 1, 2, 0x18, b"!"),
        (True, 2, 2, 0x10, b""),
    ]
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, (from_client, seq, ack, flags, payload) in enumerate(packets):
        src, dst = (client, server) if from_client else (server, client)
        sport, dport = (40000, 80) if from_client else (80, 40000)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 1, 0, 64, 6, 0, src, dst)
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 0x50, flags, 65535, 0, 0)
        frame = eth + ip + tcp + payload
        out.append(struct.pack("<IIII", 1, 1000 * i, len(frame), len(frame)) + frame)
    return b"".join(out)


def warm() -> None:
    from tcplens.capture import read_capture
    from tcplens.commands.cached_kernels import load_cached_kernels_quickly
    from tcplens.heap import reuse_freed_memory
    from tcplens.report import analyse_capture

    reuse_freed_memory()
    load_cached_kernels_quickly()  # as tcplens analyze: less to load, kernels compiled as before
    try:
        analyse_capture(read_capture(io.BytesIO(_tiny_capture())))
    except Exception:  # a failed warm-up only costs time; the real analysis reports errors
        logger.warning("analysis warm-up failed", exc_info=True)
    # What the server has loaded lives as long as it does: out of the cyclic collector's sight
    # (gc.freeze), so no collection in a forked analysis walks those ~10^5 objects again, nor
    # copies their pages by writing GC headers. A full collection in a forked analysis took
    # 0.14 s of CPU before, nothing after.
    gc.freeze()


warm()
