"""Segments.resent (written by the per-packet pass) is tcp.resent.resent applied per direction."""

from __future__ import annotations

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.resent import resent
from tests.capture.shared_captures import LAB, PRACTICAL, require, shared_files

CAPTURES = shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcapng")


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_resent_column_is_the_resent_rule_per_direction(path) -> None:  # type: ignore[no-untyped-def]
    seg = analyze_tcp(read_capture(path).packets).segments
    expected = np.zeros(len(seg), np.bool_)
    seq = seg.unwrapped_seq()
    for k in range(seg.offsets.shape[0] - 1):
        rows = np.arange(seg.offsets[k], seg.offsets[k + 1])
        data = rows[seg.payload_len[rows] > 0]
        expected[data] = resent(seq[data], seg.payload_len[data], seg.events[data])
    assert seg.resent.dtype == np.bool_
    assert np.array_equal(seg.resent, expected)


def test_lossy_download_resends_67_segments() -> None:
    path = LAB / "lossy_download.pcap"
    require(path)
    seg = analyze_tcp(read_capture(path).packets).segments
    assert int(np.count_nonzero(seg.resent)) == 67
