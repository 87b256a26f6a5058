"""A transfer of more than 4 GiB: relative sequence numbers pass 2**31 and 2**32.

Segments stores ``seq``/``ack`` mod 2**32 (4 bytes each, issue 4); every reader that needs the
numbers themselves unwraps them: the diagnosis's transfers (flow_labels), the window headroom,
SACK edges and the series file (Karn's rule in the per-packet pass keeps its queue's ends
unwrapped, tcp.karn). Each
assertion below fails when one of them reads the stored 32 bits as the number.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import ACK, SYN
from tcplens.diagnosis.from_analysis import (
    KernelColumns,
    LabelledConnections,
    flow_facts,
    labelled_rows,
)
from tcplens.report import analyse_capture
from tcplens.services.analysis_child import write_series
from tcplens.storage.series import decode_series
from tcplens.tcp.model import RTT_DATA_ACK, TcpAnalysis
from tcplens.tcp.window import window_headroom
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

SEGMENT = 65_000  # payload bytes per data segment (IPv4's 16-bit total length holds it)
SEGMENTS = 70_000  # 4.55 GB: relative numbers beyond 2**32
LOST = 68_000  # this segment's first copy never arrives: its first byte is beyond 2**32
START_NS = 1_700_000_000 * 10**9
SPACING_NS = 100_000  # one segment every 0.1 ms
RTT_NS = 5_000_000  # capture point at the sender: each ACK 5 ms after the segment it answers
ISN_CLIENT, ISN_SERVER = 123_456_789, 3_000_000_000
CLIENT, SERVER = ("10.9.0.1", 40000), ("10.9.0.2", 443)


def _start(i: int) -> int:
    return 1 + i * SEGMENT  # relative: the SYN takes 0


class _Capture:
    """The packets of the transfer, and what each reader must find in them."""

    def __init__(self) -> None:
        self.packets: list[tuple[int, bool, int, int, int, bytes, int]] = []
        self.ack_rows: list[tuple[int, int, tuple[int, int] | None]] = []  # (t, ack, sack)
        # data -> ACK RTT samples Karn's rule must take, each one RTT_NS: the SYN's and the
        # SYN/ACK's (each takes a sequence number), then one per ACK below
        self.samples = 2
        # SYN, SYN/ACK (window scale 7, SACK permitted), ACK
        syn_options = b"\x02\x04\x05\xb4\x04\x02\x01\x03\x03\x07"
        self._add(START_NS - 3 * RTT_NS, True, 0, 0, SYN, syn_options)
        self._add(START_NS - 2 * RTT_NS, False, 0, 1, SYN | ACK, syn_options)
        self._add(START_NS - RTT_NS, True, 1, 1, ACK)
        sends = [(START_NS + i * SPACING_NS, i) for i in range(SEGMENTS)]
        # the receiver: a cumulative ACK every second in-order segment, an immediate duplicate
        # ACK with one SACK block (RFC 2018) for each segment above the hole; the sender
        # resends the lost segment after the third duplicate ACK (RFC 5681 fast retransmit)
        acks: list[tuple[int, int, tuple[int, int] | None, bool]] = []
        cum, block, in_order, dupacks, k, lost = _start(0), None, 0, 0, 0, False
        while k < len(sends):
            t, i = sends[k]
            k += 1
            self._add(t, True, _start(i), 1, ACK, payload=SEGMENT)
            if i == LOST and not lost:
                lost = True  # lost after the capture point
                continue
            if _start(i) == cum:
                cum = _start(i) + SEGMENT
                if block is not None:  # the hole is filled: everything above it is acked
                    cum, block = block[1], None
                    acks.append((t + RTT_NS, cum, None, False))  # re-sent range: no sample
                    continue
                in_order += 1
                if in_order % 2 == 0 or i == SEGMENTS - 1:
                    acks.append((t + RTT_NS, cum, None, True))
            else:
                block = (block[0] if block else _start(i), _start(i) + SEGMENT)
                acks.append((t + RTT_NS, cum, block, True))
                dupacks += 1
                if dupacks == 3:  # resent 10 us after the third duplicate ACK arrives
                    resend = t + RTT_NS + 10_000
                    sends.insert(next(j for j in range(k, len(sends)) if sends[j][0] > resend),
                                 (resend, LOST))  # fmt: skip
        for t, ack, sack, sample in acks:
            self.samples += sample
            self.ack_rows.append((t, ack, sack))
            options = b"" if sack is None else b"\x01\x01\x05\x0a" + struct.pack(
                "!II", (sack[0] + ISN_CLIENT) % 2**32, (sack[1] + ISN_CLIENT) % 2**32
            )  # fmt: skip
            self._add(t, False, 1, ack, ACK, options)
        self.packets.sort(key=lambda p: p[0])  # (stable: a data segment before its ACK)
        self.data_starts = [p[2] for p in self.packets if p[1] and p[6] > 0]

    def _add(self, t: int, client: bool, seq: int, ack: int, flags: int, options: bytes = b"",
             payload: int = 0) -> None:  # fmt: skip
        self.packets.append((t, client, seq, ack, flags, options, payload))

    def write(self, path: Path) -> None:
        frames = []
        # each packet its own IPv4 identification, as a Linux sender numbers a connection's
        # packets (a resend or a duplicate ACK with the same one would be a copy of the packet
        # captured twice: capture.copies)
        for n, (t, client, seq, ack, flags, options, payload) in enumerate(self.packets):
            (src, sport), (dst, dport) = (CLIENT, SERVER) if client else (SERVER, CLIENT)
            own, peer = (ISN_CLIENT, ISN_SERVER) if client else (ISN_SERVER, ISN_CLIENT)
            segment = tcp(sport, dport, (own + seq) % 2**32, (peer + ack) % 2**32 if flags & ACK
                          else 0, flags, 65535, options)  # fmt: skip
            ident = n % 0xFFFF + 1
            frame = ethernet(
                ipv4(src, dst, 6, segment, ident=ident, total_len=20 + len(segment) + payload)
            )
            frames.append(Packet(t, frame, origlen=len(frame) + payload))
        path.write_bytes(pcap_file(frames, nanos=True, snaplen=96))


@pytest.fixture(scope="module")
def transfer(tmp_path_factory: pytest.TempPathFactory) -> tuple[_Capture, Path]:
    scripted = _Capture()
    path = tmp_path_factory.mktemp("beyond_4_gib") / "transfer.pcap"
    scripted.write(path)
    return scripted, path


def _analysis(path: Path) -> tuple[TcpAnalysis, dict]:  # type: ignore[type-arg]
    return analyse_capture(read_capture(str(path)))


def test_sequence_and_ack_numbers_beyond_4_gib(transfer: tuple[_Capture, Path]) -> None:
    scripted, path = transfer
    analysis, report = _analysis(path)
    seg = analysis.segments
    c2s, s2c = seg.slice_of(0, 0), seg.slice_of(0, 1)
    data = np.flatnonzero(seg.payload_len[c2s] > 0) + c2s.start
    seq = seg.unwrapped_seq()
    assert seq[data].tolist() == scripted.data_starts
    assert seq[data].max() == _start(SEGMENTS - 1) > 2**32  # (stored: 32 bits)
    acks = seg.unwrapped_ack()[s2c][1:]  # after the SYN/ACK
    assert acks.tolist() == [ack for _, ack, _ in scripted.ack_rows]
    left, right = seg.sack_edges()
    blocks = [sack for _, _, sack in scripted.ack_rows if sack is not None]
    assert list(zip(left.tolist(), right.tolist(), strict=True)) == blocks
    assert seg.end_seq[data[-1]] == _start(SEGMENTS) > 2**32
    flow = report["flows"][0]
    assert flow["bytes"]["client_to_server"] == SEGMENTS * SEGMENT
    assert flow["retransmissions"] == 1
    assert int(seg.resent.sum()) == 1


def test_karns_rule_beyond_4_gib(transfer: tuple[_Capture, Path]) -> None:
    # each ACK and SACK block times the segment it answers, 5 ms earlier; the ACK that fills
    # the hole covers a re-sent segment and times nothing (Karn)
    scripted, path = transfer
    rtt = _analysis(path)[0].rtt
    data_ack = rtt.kind == RTT_DATA_ACK
    assert int(data_ack.sum()) == scripted.samples
    assert (rtt.rtt_ns[data_ack] == RTT_NS).all()


def test_diagnosis_window_and_series_read_the_numbers_beyond_4_gib(
    transfer: tuple[_Capture, Path], tmp_path: Path
) -> None:
    scripted, path = transfer
    capture = read_capture(str(path))
    analysis, _report = analyse_capture(capture)
    origin = int(capture.info.first_ts_ns or 0)
    facts = flow_facts(analysis, origin)
    conns = LabelledConnections(
        analysis, KernelColumns(analysis), origin, facts, labelled_rows(facts)
    )
    sent = conns[1].transfers[0]
    assert sent.seq.tolist() == scripted.data_starts
    assert sent.ack.tolist() == [1, *(ack for _, ack, _ in scripted.ack_rows)]
    # how much more the sender could have sent: within the 8 MB window, not 2**32 off
    headroom = window_headroom(analysis.segments, analysis.flows)
    c2s = analysis.segments.slice_of(0, 0)
    known = headroom[c2s][analysis.segments.payload_len[c2s] > 0]
    assert known.size == len(scripted.data_starts)
    assert (np.abs(known) < 65535 << 7).all()
    write_series(capture, analysis, tmp_path, "r")
    series = decode_series((tmp_path / "series.arrow").read_bytes())
    assert series.column("seq").to_numpy()[c2s][2:].tolist() == scripted.data_starts
    assert series.column("ack").to_numpy()[analysis.segments.slice_of(0, 1)][1:].tolist() == [
        ack for _, ack, _ in scripted.ack_rows
    ]
