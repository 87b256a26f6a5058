"""``analyze_tcp(consume=True)``: the analysis takes over the memory of the packet columns it is
done with, and nobody ever reads what it wrote there in place of a column."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcplens.capture import buffers, read_capture
from tcplens.capture.memory import mapped_regions
from tcplens.capture.table import (
    DONE_AFTER_EVENTS,
    DONE_AFTER_FLOWS,
    LAYOUT,
    Capture,
    PacketTable,
    ReleasedColumnError,
)
from tcplens.report import analyse_capture, write_report
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import TcpAnalysis
from tests.capture.shared_captures import LAB, PRACTICAL, require

CAPTURES = [
    LAB / "lossy_download.pcap",
    LAB / "dns_delay_upload.pcap",
    LAB / "no_reuse_uploads.pcap",
    PRACTICAL / "http_ip4and6.pcapng",  # per-packet interface and link type columns
]


def _region(array: np.ndarray) -> tuple[int, int]:
    """The ``anonymous_memory`` mapping ``array`` lies in."""
    start = array.ctypes.data
    for address, nbytes in mapped_regions():
        if address <= start < address + nbytes:
            return address, nbytes
    raise AssertionError("not in a mapped region")


def _overlaps(array: np.ndarray, region: tuple[int, int]) -> bool:
    start = array.ctypes.data
    return start < region[0] + region[1] and region[0] < start + array.nbytes


def _arrays(analysis: TcpAnalysis) -> dict[str, Any]:
    out = {}
    for part in ("flows", "segments", "rtt"):
        for name, value in vars(getattr(analysis, part)).items():
            if isinstance(value, np.ndarray):
                out[f"{part}.{name}"] = value
    return out


def test_the_groups_hold_every_dense_column_once() -> None:
    groups = DONE_AFTER_FLOWS + DONE_AFTER_EVENTS
    assert sorted(groups) == sorted(name for name, _ in LAYOUT)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_consuming_the_table_gives_the_same_analysis_and_report(path: Path) -> None:
    _same_either_way(path)


def test_a_compressed_capture_read_window_by_window_is_consumed_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(LAB / "lossy_download.pcap")
    monkeypatch.setattr(buffers, "STREAM_BUFFER", 64 << 10)  # many windows: pieces, joined
    packed = tmp_path / "lossy_download.pcap.gz"
    packed.write_bytes(gzip.compress((LAB / "lossy_download.pcap").read_bytes()))
    _same_either_way(packed)
    capture = read_capture(packed)
    after_flows = _region(capture.packets.src_id)
    assert _region(capture.packets.dst_port) == after_flows  # joined into one block as well
    segments = analyze_tcp(capture.packets, consume=True).segments
    assert _region(segments.time_ns) == after_flows


def _same_either_way(path: Path) -> None:
    require(path)
    kept, consumed = read_capture(path), read_capture(path)
    expected = analyze_tcp(kept.packets, kept.info.first_ts_ns)
    got = analyze_tcp(consumed.packets, consumed.info.first_ts_ns, consume=True)
    want, have = _arrays(expected), _arrays(got)
    assert want.keys() == have.keys()
    for key, array in want.items():
        assert np.array_equal(array, have[key]), key
    assert _printed(read_capture(path), consume=True) == _printed(kept, consume=False)


def _printed(capture: Capture, *, consume: bool) -> bytes:
    """What ``tcplens analyze --json --events`` prints for ``capture``."""
    analysis, report = analyse_capture(capture, consume_packets=consume)
    out = io.BytesIO()
    write_report(out.write, report, analysis.segments)
    return out.getvalue()


def test_the_analysis_arrays_take_the_pages_of_the_columns_it_is_done_with() -> None:
    require(LAB / "lossy_download.pcap")
    capture = read_capture(LAB / "lossy_download.pcap")
    packets = capture.packets
    after_flows, after_events = _region(packets.src_id), _region(packets.tcp_seq)
    assert after_flows != after_events
    # the timestamp pairs are found before the per-packet pass: their columns die with the flow
    # assignment's, and their pages too take Segments' columns
    assert _region(packets.ts_val) == _region(packets.ts_ecr) == after_flows
    analysis = analyze_tcp(packets, capture.info.first_ts_ns, consume=True)
    seg, rtt = analysis.segments, analysis.rtt
    assert len(rtt) > 100 and len(seg) > 1000
    # the Segments are made once the flows are assigned: their columns fill that block, the
    # largest first (``tcp.compiled.empty_columns``), so what is left of it is less than any
    # column that did not fit (not the frame column: it is the flow layout's rows, overwritten
    # in place in the scratch)
    assert _region(seg.time_ns) == after_flows
    assert _region(seg.seq) == after_flows
    # (nor the flags and events: the scratch's first half, as the frames are its second; nor the
    # SACK blocks: the packet table's own entries, not a copy; nor the per-flow ISNs)
    shared = ("sack_block_row", "sack_block_left", "sack_block_right")
    assert all(getattr(seg, k) is getattr(packets, k) for k in shared)
    own = [k for k in vars(seg) if k not in ("offsets", "frame", "flags", "events", "isn", *shared)]
    columns = [a for k, a in vars(seg).items() if k in own and a.size]
    inside = [a for a in columns if _overlaps(a, after_flows)]
    outside = [a for a in columns if not _overlaps(a, after_flows)]
    assert len(inside) >= 5
    left = after_flows[1] - sum(-(-a.nbytes // 64) * 64 for a in inside)  # (64-byte aligned)
    assert left >= 0
    assert all(left < a.nbytes for a in outside)
    # the RTT samples once the per-packet pass is done (their times and frames are read through
    # their rows from the Segments' columns)
    assert _region(rtt.rtt_ns) == after_events
    assert _region(rtt.row) == _region(rtt.sent_row) == after_events
    assert rtt.segment_time_ns is seg.time_ns


def test_a_column_the_caller_holds_keeps_its_data_and_the_table_refuses_released_ones() -> None:
    require(LAB / "lossy_download.pcap")
    capture = read_capture(LAB / "lossy_download.pcap")
    packets = capture.packets
    held_seq = packets.tcp_seq  # a column ...
    held_ports = packets.src_port[5:]  # ... and a view of one, in the two blocks
    seq, ports = held_seq.copy(), held_ports.copy()
    n = len(packets)
    analysis = analyze_tcp(packets, capture.info.first_ts_ns, consume=True)
    assert np.array_equal(held_seq, seq) and np.array_equal(held_ports, ports)
    blocks = [_region(held_seq), _region(held_ports)]
    for name, array in _arrays(analysis).items():
        assert not any(_overlaps(array, block) for block in blocks), name
    expected = analyze_tcp(read_capture(LAB / "lossy_download.pcap").packets)
    for key, array in _arrays(expected).items():
        assert np.array_equal(array, _arrays(analysis)[key]), key
    assert len(packets) == n  # the table still knows its size, and its addresses
    assert packets.addresses.shape[1] == 16
    for name in (*DONE_AFTER_FLOWS, *DONE_AFTER_EVENTS):
        with pytest.raises(ReleasedColumnError, match=f"PacketTable.{name} was handed over"):
            getattr(packets, name)
    unknown = "no_such_column"  # (an unknown name is still an AttributeError)
    with pytest.raises(AttributeError):
        getattr(packets, unknown)


def test_a_table_is_released_only_by_the_path_that_consumes_it() -> None:
    require(LAB / "nagle_delack.pcap")
    capture = read_capture(LAB / "nagle_delack.pcap")
    analyse_capture(capture)
    analyze_tcp(capture.packets)
    assert isinstance(capture.packets, PacketTable)
    assert capture.packets.tcp_seq.shape == (len(capture.packets),)
