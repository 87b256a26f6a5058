"""DNS over UDP: header, first question, A/AAAA answers; from a lab capture and built messages."""

from __future__ import annotations

import io
import struct

import pytest

from tcplens.capture import read_capture
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, udp
from tests.capture.shared_captures import LAB, require


def _name(dotted: str) -> bytes:
    if not dotted:
        return b"\x00"  # the root
    return b"".join(bytes([len(label)]) + label.encode() for label in dotted.split(".")) + b"\x00"


def _message(
    ident: int, flags: int, qname: str, qtype: int, answers: list[tuple[int, bytes]]
) -> bytes:
    header = struct.pack("!HHHHHH", ident, flags, 1, len(answers), 0, 0)
    question = _name(qname) + struct.pack("!HH", qtype, 1)
    records = b"".join(
        b"\xc0\x0c"
        + struct.pack("!HHIH", rtype, 1, 60, len(rdata))
        + rdata  # name: pointer to the question
        for rtype, rdata in answers
    )
    return header + question + records


def _capture(*messages: tuple[int, int, bytes]):  # type: ignore[no-untyped-def]
    frames = [
        Packet(k, ethernet(ipv4("10.0.0.1", "10.0.0.53", 17, udp(sport, dport, payload))))
        for k, (sport, dport, payload) in enumerate(messages)
    ]
    return read_capture(io.BytesIO(pcap_file(frames)))


def test_query_and_response_with_addresses() -> None:
    query = _message(0x1234, 0x0100, "example.org", 1, [])
    response = _message(
        0x1234, 0x8180, "example.org", 1,
        [(1, bytes([93, 184, 216, 34])), (5, _name("alias.example.org")), (28, bytes.fromhex("20010db8000000000000000000000001"))],
    )  # fmt: skip
    dns = _capture((40000, 53, query), (53, 40000, response), (40000, 8080, query)).dns
    assert dns.packet_index.tolist() == [0, 1]  # the third datagram is not port 53
    assert dns.dns_id.tolist() == [0x1234, 0x1234]
    assert dns.is_response.tolist() == [False, True]
    assert dns.rcode.tolist() == [0, 0]
    assert dns.qtype.tolist() == [1, 1]
    assert dns.qname.tolist() == ["example.org", "example.org"]
    assert dns.answer_addrs == ((), ("93.184.216.34", "2001:db8::1"))


def test_nxdomain_and_root_name() -> None:
    dns = _capture((53, 5000, _message(7, 0x8183, "", 2, []))).dns
    assert dns.rcode.tolist() == [3]
    assert dns.qtype.tolist() == [2]
    assert dns.qname.tolist() == [""]


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00" * 5,
        struct.pack("!6H", 1, 0, 1, 0, 0, 0) + b"\x3f" + b"a" * 10,
        struct.pack("!6H", 1, 0, 1, 0, 0, 0) + b"\xc0\x0c",
    ],
    ids=["short-header", "label-past-the-end", "pointer-loop"],
)
def test_broken_messages_never_crash(payload: bytes) -> None:
    capture = _capture((1000, 53, payload))
    assert capture.info.packets == 1
    assert len(capture.dns.qname) <= 1


def test_lab_reverse_lookups_before_the_upload() -> None:
    require(LAB)
    dns = read_capture(LAB / "dns_delay_upload.pcap").dns
    assert (dns.packet_index + 1).tolist() == [1, 2, 3, 4]  # frame numbers, as tshark shows them
    assert (
        dns.qname.tolist() == ["2.0.77.10.in-addr.arpa"] * 2 + ["fileserver.example.internal"] * 2
    )
    assert dns.qtype.tolist() == [12, 12, 1, 1]
    assert dns.is_response.tolist() == [False, True, False, True]
    assert dns.rcode.tolist() == [0, 3, 0, 3]
    assert dns.dns_id.tolist() == [0x1240, 0x1240, 0x1235, 0x1235]
