"""Every kernel of the analysis core compiled into its cache (``tcplens kernels``, the install
step) or loaded from it (the analysis fork server's warm-up): ``build``, ``run_every_kernel``.

Kernels compile on their first call with the types of that call, and which kernels a capture
reaches depends on its format and contents: ``run_every_kernel`` analyses small captures made
here that take every path through the kernels, and calls every kernel the diagnosis calls from
Python on each connection they have, whether a rule calls it there or not (the test of the build
step analyses real captures of every kind afterwards and checks that none compiles).
"""

from __future__ import annotations

import gzip
import io
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tcplens import kernel_cache

if TYPE_CHECKING:
    from tcplens.tcp.model import TcpAnalysis


def run_every_kernel() -> None:
    """Analyse small captures that take every path of the core through its kernels: a pcap
    (mapped and walked), a pcapng (mapped, walked in parallel), each also as a compressed stream
    (read window by window), each with its events written as ``tcplens analyze --events``
    writes them. Loads every kernel from the cache, or compiles it into the cache."""
    from tcplens.capture import read_capture
    from tcplens.report import analyse_capture, write_report

    pcap = _tiny_pcap()
    with tempfile.TemporaryDirectory(prefix="tcplens-kernels-") as scratch:
        pcapng = _tiny_pcapng()
        files = {
            "tiny.pcap": pcap,
            "tiny.pcap.gz": gzip.compress(pcap),
            "tiny.pcapng": pcapng,
            "tiny.pcapng.gz": gzip.compress(pcapng),
        }
        for name, data in files.items():
            path = Path(scratch) / name
            path.write_bytes(data)
            capture = read_capture(path)
            analysis, report = analyse_capture(capture, consume_packets=True)
            write_report(io.BytesIO().write, report, analysis.segments)
            _run_diagnosis_kernels(analysis)


def _run_diagnosis_kernels(analysis: TcpAnalysis) -> None:
    """Every kernel the diagnosis calls from Python, on every connection it labels (the rules
    call them only for a flow they found something in; ``timeline.run_every_kernel``)."""
    from tcplens.diagnosis import timeline
    from tcplens.diagnosis.from_analysis import (
        KernelColumns,
        LabelledConnections,
        flow_facts,
        labelled_rows,
    )

    origin = analysis.capture_start_ns
    facts = flow_facts(analysis, origin)
    conns = LabelledConnections(
        analysis, KernelColumns(analysis), origin, facts, labelled_rows(facts)
    )
    for flow in conns:
        timeline.run_every_kernel(conns[flow])


def build(progress: Callable[[int], None] | None = None) -> Path:
    """Compile every kernel of the core into the cache directory, unless it is complete; returns
    the directory. ``progress(compiled)`` is called every few seconds meanwhile with the number
    of kernels compiled so far (numba's compile events; a kernel found in the cache is loaded)."""
    from numba.core import event

    path = kernel_cache.use()
    if kernel_cache.is_built(path):
        return path
    failed: list[BaseException] = []

    def work() -> None:
        try:
            run_every_kernel()
        except BaseException as error:  # re-raised in the calling thread
            failed.append(error)

    with event.install_recorder("numba:compile") as compiles:
        worker = threading.Thread(target=work, name="tcplens-kernel-build")
        worker.start()
        while worker.is_alive():
            worker.join(2.0)
            if progress is not None:
                progress(sum(1 for _, e in list(compiles.buffer) if e.is_end))
    if failed:
        raise failed[0]
    (path / kernel_cache.CHECKOUT).write_text(kernel_cache.package())
    (path / kernel_cache.BUILT).write_text(kernel_cache.build_stamp())
    return path


def _tiny_packets() -> list[tuple[int, bytes]]:
    """(µs, Ethernet frame) of a DNS lookup (RFC 1035) and then a TCP connection with options
    (MSS, SACK permitted, window scale, timestamps: RFC 9293, 2018, 7323), data each way, a
    retransmission, a SACK block, a zero window and its update, and a FIN each way: enough
    for every kernel a real analysis runs (the diagnosis labels connections with payload)."""
    eth = b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\x08\x00"
    client, server, resolver = b"\n\0\0\1", b"\n\0\0\2", b"\n\0\0\3"

    def ip(src: bytes, dst: bytes, proto: int, body: bytes) -> bytes:
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 1, 0, 64, proto, 0, src, dst)
        return eth + header + body

    name = b"\x07example\x03com\x00"
    query = struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", 1, 1)
    answer = struct.pack("!HHHHHH", 7, 0x8180, 1, 1, 0, 0) + name + struct.pack("!HH", 1, 1)
    answer += struct.pack("!HHHIH4s", 0xC00C, 1, 1, 60, 4, server)
    frames = [
        ip(client, resolver, 17, struct.pack("!HHHH", 5353, 53, 8 + len(query), 0) + query),
        ip(resolver, client, 17, struct.pack("!HHHH", 53, 5353, 8 + len(answer), 0) + answer),
    ]

    def timestamps(value: int, echo: int) -> bytes:
        return b"\x01\x01\x08\x0a" + struct.pack("!II", value, echo)

    syn_options = b"\x02\x04\x05\xb4\x04\x02" + timestamps(1, 0)[2:] + b"\x01\x03\x03\x07"
    # (from client?, seq, ack, flags, window, options, payload)
    segments = [
        (True, 0, 0, 0x02, 65535, syn_options, b""),
        (False, 0, 1, 0x12, 65535, syn_options, b""),
        (True, 1, 1, 0x10, 512, timestamps(2, 1), b""),
        (True, 1, 1, 0x18, 512, timestamps(3, 1), b"??"),
        (False, 1, 3, 0x18, 512, timestamps(4, 3), b"!!!!"),
        (False, 5, 3, 0x18, 512, timestamps(5, 3), b"!!!!"),
        (True, 3, 5, 0x10, 512, b"\x01\x01\x05\x0a" + struct.pack("!II", 9, 13), b""),
        (False, 1, 3, 0x18, 512, timestamps(6, 3), b"!!!!"),  # retransmitted
        (True, 3, 13, 0x10, 0, timestamps(7, 6), b""),  # zero window
        (True, 3, 13, 0x10, 512, timestamps(8, 6), b""),  # window update
        (True, 3, 13, 0x11, 512, timestamps(9, 6), b""),
        (False, 13, 4, 0x11, 512, timestamps(10, 9), b""),
        (True, 4, 14, 0x10, 512, timestamps(11, 10), b""),
    ]
    # Two connections: per-flow columns of one flow are contiguous however they are sliced,
    # and numba compiles a kernel again for a strided ("A" layout) array of a real capture.
    for port in (40000, 40001):
        for from_client, seq, ack, flags, window, options, payload in segments:
            src, dst = (client, server) if from_client else (server, client)
            sport, dport = (port, 80) if from_client else (80, port)
            offset = (20 + len(options)) // 4 << 4
            tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, offset, flags, window, 0, 0)
            frames.append(ip(src, dst, 6, tcp + options + payload))
    return [(3000 * i, frame) for i, frame in enumerate(frames)]


def _tiny_pcap() -> bytes:
    """``_tiny_packets`` in a little-endian Ethernet pcap with µs timestamps."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for us, frame in _tiny_packets():
        out.append(struct.pack("<IIII", 1 + us // 10**6, us % 10**6, len(frame), len(frame)))
        out.append(frame)
    return b"".join(out)


def _tiny_pcapng() -> bytes:
    """``_tiny_packets`` in a little-endian pcapng: a section header, one Ethernet interface
    (µs timestamps), an enhanced packet block per frame (pcapng, draft-ietf-opsawg-pcapng)."""

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        total = len(body) + 12
        return struct.pack("<II", kind, total) + body + struct.pack("<I", total)

    out = [
        block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
        block(1, struct.pack("<HHI", 1, 0, 65535)),
    ]
    for us, frame in _tiny_packets():
        ts = 10**6 + us
        header = struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(frame), len(frame))
        out.append(block(6, header + frame))
    return b"".join(out)
