"""dns-delay on DNS exchanges placed before a connection (the reader's DNS table feeds the same
views from real captures; see test_lab.py)."""

from __future__ import annotations

import ipaddress

import numpy as np

from tcplens.diagnosis.context import Context
from tcplens.diagnosis.rules import dns_delay
from tcplens.diagnosis.timeline import Intervals, LabelledTime
from tcplens.diagnosis.transfer import DnsExchange, FlowFacts


def _v4(a: str) -> np.ndarray:
    return np.frombuffer(ipaddress.IPv6Address(f"::ffff:{a}").packed, np.uint8)


def _ctx(syn_s: float, dns: list[DnsExchange]) -> Context:
    """One connection 10.77.0.1:49624 → 10.77.0.2:80 whose SYN is frame 5 at ``syn_s``."""
    f = np.array
    facts = FlowFacts(
        id=f([1]), start_s=f([syn_s]), end_s=f([syn_s + 0.13]), duration_s=f([0.13]), syn_s=f([syn_s]),
        established_s=f([syn_s + 0.021]), handshake_rtt_s=f([0.021]),
        last_data_s=f([syn_s + 0.12]), payload=f([102400]), first_frame=f([5]),
        client_addr=_v4("10.77.0.1")[None, :], client_port=f([49624], np.uint16),
        server_addr=_v4("10.77.0.2")[None, :], server_port=f([80], np.uint16),
    )  # fmt: skip
    return Context(facts, {}, LabelledTime.of(Intervals.concat([])), dns)


def _ptr_then_a(answer_after: float) -> list[DnsExchange]:
    return [
        DnsExchange(0.0, answer_after, 1, 2, "2.0.77.10.in-addr.arpa", 12, "10.77.0.1", ()),
        DnsExchange(
            answer_after + 0.0005, 2 * answer_after + 0.0005, 3, 4,
            "fileserver.example.internal", 1, "10.77.0.1", ("10.77.0.2",),
        ),
    ]  # fmt: skip


def test_reverse_lookup_of_an_ip_literal_is_called_out_with_the_wait() -> None:
    ctx = _ctx(3.0446, _ptr_then_a(1.52))
    (finding,) = dns_delay.detect(ctx)
    assert finding.factor == "dns"
    assert finding.severity == "high"
    assert abs((finding.time_lost_s or 0) - 3.0405) < 1e-3
    assert "waited 3.0 s for DNS" in finding.summary
    assert "reverse (PTR) lookup of the IP literal 10.77.0.2 took 1.5 s" in finding.summary
    assert "fileserver.example.internal took 1.5 s" in finding.summary
    assert "UseDNS no" in finding.fix
    assert finding.evidence.frames == (1, 2, 3, 4, 5)


def test_fast_lookups_are_not_a_finding() -> None:
    ctx = _ctx(0.05, _ptr_then_a(0.02))
    assert dns_delay.detect(ctx) == []


def test_lookups_from_another_host_do_not_count() -> None:
    other = [
        DnsExchange(0.0, 1.5, 1, 2, "example.org", 1, "10.77.0.9", ("10.77.0.2",)),
    ]
    assert dns_delay.detect(_ctx(1.6, other)) == []


def test_reverse_names_map_back_to_addresses() -> None:
    assert dns_delay.reverse_name_address("2.0.77.10.in-addr.arpa") == "10.77.0.2"
    v6 = ".".join(reversed("20010db8000000000000000000000001")) + ".ip6.arpa"
    assert dns_delay.reverse_name_address(v6) == "2001:db8::1"
    assert dns_delay.reverse_name_address("example.org") is None
