"""The parallel passes (flows in chunks, tcp.grouping) give the same analysis as one serial pass."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.tcp import grouping
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import TcpAnalysis
from tests.capture.shared_captures import LAB, PRACTICAL, require


def _columns(analysis: TcpAnalysis) -> dict[str, np.ndarray]:
    out = {}
    for part in dataclasses.fields(analysis):
        value = getattr(analysis, part.name)
        if dataclasses.is_dataclass(value):
            for column in dataclasses.fields(value):
                out[f"{part.name}.{column.name}"] = np.asarray(getattr(value, column.name))
    return out


@pytest.mark.parametrize(
    "path",
    [
        LAB / "no_reuse_uploads.pcap",
        PRACTICAL / "http_espn_fail.pcapng",
    ],
    ids=lambda p: p.name,
)
def test_chunking_does_not_change_the_analysis(path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    require(path.parent)
    packets = read_capture(path).packets
    parallel = analyze_tcp(packets)
    assert len(parallel.flows) >= 8  # several chunks: one per flow here
    monkeypatch.setattr(grouping, "CHUNKS_PER_THREAD", 1)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        serial = analyze_tcp(packets)
    finally:
        numba.set_num_threads(threads)
    a, b = _columns(parallel), _columns(serial)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert np.array_equal(a[name], b[name]), name
