"""DNS over UDP port 53: id, query/response, rcode, first question (RFC 1035 §4.1)."""

from __future__ import annotations

import numpy as np

from tcplens.capture.table import DnsTable


def empty_dns_table() -> DnsTable:
    return DnsTable(
        packet_index=np.zeros(0, np.int64),
        dns_id=np.zeros(0, np.uint16),
        is_response=np.zeros(0, np.bool_),
        rcode=np.zeros(0, np.uint8),
        qtype=np.zeros(0, np.uint16),
        qname=np.zeros(0, np.object_),
    )
