"""pcap: the four magics, record lengths, snaplen-cut packets, a file that ends mid-record."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tcplens.capture import MalformedCaptureError, NotACaptureError, read_capture
from tcplens.capture.table import ACK, PARSED, PSH, TRUNCATED
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

T0 = 1_700_000_000_123_456_000


def _data_segment(payload_len: int, seq: int = 1000) -> bytes:
    segment = tcp(40000, 443, seq, 77, ACK | PSH, 501, payload=b"x" * payload_len)
    return ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, segment))


def _packets() -> list[Packet]:
    return [Packet(T0 + k * 1_000_000, _data_segment(100 + k, seq=1000 + k)) for k in range(5)]


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("nanos", [False, True])
def test_all_four_magics_read_the_same(big: bool, nanos: bool) -> None:
    capture = read_capture(io.BytesIO(pcap_file(_packets(), big=big, nanos=nanos)))
    table = capture.packets
    assert capture.info.format == "pcap"
    assert capture.info.link_types == (1,)
    assert table.frame.tolist() == [1, 2, 3, 4, 5]
    assert table.ts_ns.tolist() == [T0 + k * 1_000_000 for k in range(5)]
    assert table.tcp_seq.tolist() == [1000, 1001, 1002, 1003, 1004]
    assert table.tcp_payload_len.tolist() == [100, 101, 102, 103, 104]
    assert (table.status == PARSED).all()


def test_nanosecond_timestamps_keep_their_nanoseconds() -> None:
    packets = [Packet(T0 + 789, _data_segment(10))]
    table = read_capture(io.BytesIO(pcap_file(packets, nanos=True))).packets
    assert table.ts_ns.tolist() == [T0 + 789]


def test_snaplen_cut_segment_keeps_its_true_payload_length() -> None:
    frame = _data_segment(1448)
    packets = [Packet(T0, frame[:96], origlen=len(frame))]
    table = read_capture(io.BytesIO(pcap_file(packets, snaplen=96))).packets
    assert table.caplen.tolist() == [96]
    assert table.origlen.tolist() == [14 + 20 + 20 + 1448]
    assert table.tcp_payload_len.tolist() == [1448]
    assert table.status.tolist() == [PARSED | TRUNCATED]


def test_file_ending_inside_a_record_keeps_the_packets_before_it() -> None:
    data = pcap_file(_packets())
    cut = len(data) - 30
    capture = read_capture(io.BytesIO(data[:cut]))
    assert capture.info.packets == 4
    assert capture.info.truncated
    (warning,) = capture.info.warnings
    last_record = 24 + sum(16 + len(p.data) for p in _packets()[:4])
    assert f"ends at byte {cut:,}" in warning
    assert f"starts at byte {last_record:,}" in warning
    assert "4 packets before it" in warning


def test_record_longer_than_the_limit_stops_reading_there() -> None:
    data = bytearray(pcap_file(_packets()))
    third = 24 + sum(16 + len(p.data) for p in _packets()[:2])
    data[third + 8 : third + 12] = (262145).to_bytes(4, "little")
    capture = read_capture(io.BytesIO(bytes(data)))
    assert capture.info.packets == 2
    assert any(f"stopped at byte {third:,}" in w and "262144" in w for w in capture.info.warnings)


def test_first_record_longer_than_the_limit_is_a_malformed_capture() -> None:
    data = bytearray(pcap_file(_packets()))
    data[24 + 8 : 24 + 12] = (1 << 31).to_bytes(4, "little")
    with pytest.raises(MalformedCaptureError) as error:
        read_capture(io.BytesIO(bytes(data)))
    assert error.value.code == "malformed"
    assert "byte 24" in str(error.value)


def test_header_only_is_an_empty_capture() -> None:
    capture = read_capture(io.BytesIO(pcap_file([])))
    assert capture.info.packets == 0
    assert capture.info.first_ts_ns is None
    assert len(capture.packets.tcp_seq) == 0
    assert not capture.info.truncated


def test_file_shorter_than_the_header_is_not_a_capture() -> None:
    with pytest.raises(NotACaptureError, match="too short"):
        read_capture(io.BytesIO(pcap_file([])[:20]))


def test_path_and_stream_give_the_same_table(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "five.pcap"
    path.write_bytes(pcap_file(_packets()))
    from_path = read_capture(path).packets
    with path.open("rb") as stream:
        from_stream = read_capture(stream).packets
    assert np.array_equal(from_path.tcp_seq, from_stream.tcp_seq)
    assert np.array_equal(from_path.src_id, from_stream.src_id)
    assert np.array_equal(from_path.addresses, from_stream.addresses)
    assert np.array_equal(from_path.ts_ns, from_stream.ts_ns)
