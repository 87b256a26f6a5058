"""The whole-flow overview stored at analysis time: written for the long flow directions only,
the same rows the request-time reduction keeps, and served for the graphs' first request."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from tcplens.capture import read_capture
from tcplens.db.captures import Flow
from tcplens.report import analyse_capture
from tcplens.services.analysis_child import write_series
from tcplens.services.results import series_of
from tcplens.storage.blobs import LocalBlobStore
from tcplens.storage.series import OVERVIEW_POINTS, SeriesFiles, decode_series, reduce_series
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

SEGMENTS = OVERVIEW_POINTS + 4_000  # the data direction is long, its ACKs (one per two) are not
MSS = 1460


def _bulk_capture(path: Path) -> None:
    """A client uploading SEGMENTS full segments, the server acknowledging every second one,
    captured headers only (the IP total length tells the payload length)."""
    c, s = ("10.1.0.1", 40000), ("10.1.0.2", 80)
    packets: list[Packet] = []

    def add(t_us: int, client: bool, seq: int, ack: int, flags: int, payload: int = 0) -> None:
        src, dst = (c, s) if client else (s, c)
        segment = tcp(src[1], dst[1], seq, ack, flags, 65535)
        frame = ethernet(ipv4(src[0], dst[0], 6, segment, total_len=40 + payload))
        packets.append(Packet(t_us * 1000, frame, origlen=len(frame) + payload))

    add(0, True, 100, 0, 0x02)
    add(10_000, False, 900, 101, 0x12)
    add(20_000, True, 101, 901, 0x10)
    t = 20_000
    for i in range(SEGMENTS):
        t += 10
        add(t, True, 101 + i * MSS, 901, 0x18, MSS)
        if i % 2:
            add(t + 5, False, 901, 101 + (i + 1) * MSS, 0x10)
    path.write_bytes(pcap_file(packets, snaplen=54))


def test_overview_is_stored_for_long_directions_and_served_first(tmp_path: Path) -> None:
    capture_file = tmp_path / "bulk.pcap"
    _bulk_capture(capture_file)
    capture = read_capture(str(capture_file))
    analysis, _report = analyse_capture(capture)
    out = tmp_path / "out"
    out.mkdir()
    keys = write_series(capture, analysis, out, "r")[1]  # flow 1's series_keys

    (start, stop), (ack_start, ack_stop) = keys["client_to_server"], keys["server_to_client"]
    assert keys["key"] == "r/series.arrow"
    assert stop - start == SEGMENTS + 2  # SYN, final ACK of the handshake, the data
    assert ack_stop - ack_start == SEGMENTS // 2 + 1 <= OVERVIEW_POINTS
    overview = keys["overview"]
    assert overview["key"] == "r/series_overview.arrow"
    assert overview["max_points"] == OVERVIEW_POINTS and "server_to_client" not in overview
    overview_span = overview["client_to_server"]
    assert overview_span[0] == 0

    # The stored rows are those the request-time reduction keeps of the whole direction.
    series = decode_series((out / "series.arrow").read_bytes())
    stored = decode_series((out / "series_overview.arrow").read_bytes())
    data = series.slice(start, stop - start)
    expected = reduce_series(data, start_s=None, end_s=None, max_points=OVERVIEW_POINTS)
    assert expected.reduced and stored.num_rows == expected.table.num_rows == overview_span[1]
    assert stored.column("frame").to_pylist() == expected.table.column("frame").to_pylist()

    store = LocalBlobStore(tmp_path / "blobs")
    store.put_file("r/series.arrow", out / "series.arrow")
    store.put_file("r/series_overview.arrow", out / "series_overview.arrow")
    flow = Flow(series_keys=keys)
    files = SeriesFiles(store)

    def window(direction: str, max_points: int, start: float | None = None) -> pa.Table:
        result = series_of(
            files,
            flow,
            direction=direction,
            start_s=start,
            end_s=None if start is None else start + 0.01,
            max_points=max_points,
        )
        if direction == "client_to_server" and start is None:
            assert result.reduced and result.points_in_range == SEGMENTS + 2
        return result.table

    # The graphs' first request: the stored rows as they are.
    first = window("client_to_server", OVERVIEW_POINTS)
    assert first.column("frame").to_pylist() == stored.column("frame").to_pylist()
    # A coarser whole-flow request reduces the overview further, within its bound.
    coarse = window("client_to_server", 2_000)
    assert coarse.num_rows <= 2_000
    seq = data.column("seq").to_numpy()
    assert max(coarse.column("seq").to_pylist()) == seq.max()
    assert min(coarse.column("seq").to_pylist()) == seq.min()
    # A zoomed request and the short direction read the full series.
    zoomed = window("client_to_server", OVERVIEW_POINTS, start=0.05)
    assert zoomed.num_rows == 1_000 + 1  # 10 µs apart, both ends included
    assert np.all(np.diff(zoomed.column("frame").to_numpy()) > 0)
    acks = window("server_to_client", OVERVIEW_POINTS)
    assert acks.num_rows == SEGMENTS // 2 + 1
