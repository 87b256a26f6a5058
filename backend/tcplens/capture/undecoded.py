"""What the decoder could not follow to a TCP header, named in one capture warning.

``decode.decode_packets`` counts, per part, each kind of packet it did not decode (an
``UNDECODED_*`` kind of ``link`` and its value: an ethertype, a GRE protocol, ...); the reader
adds the parts' counts up (``UndecodedCount``) and ``warning`` names them, most frequent first.
Packets that cannot carry TCP (ARP, LLDP, spanning tree, PPP's control protocols, ...) are not
counted: they are not analysed, and nothing of the analysis is missing because of them.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from tcplens.capture.link import (
    UNDECODED_DEPTH,
    UNDECODED_ETHERTYPE,
    UNDECODED_FRAGMENT,
    UNDECODED_GRE,
    UNDECODED_GRE_VERSION,
    UNDECODED_MPLS,
    UNDECODED_PPP,
    UNDECODED_UDP_TUNNEL,
    UNDECODED_WLAN,
)
from tcplens.capture.table import I64

UNDECODED_SLOTS = 16  # kinds counted apart per part of a chunk (the last slot: the others)
NAMED = 6  # kinds named in the warning; the rest are counted together

_WLAN = {1: "protected (encrypted) 802.11 frames", 2: "802.11 A-MSDUs"}


def _kind_text(key: int) -> str:
    kind, value = key >> 16, key & 0xFFFF
    if kind == UNDECODED_ETHERTYPE:
        return f"ethertype 0x{value:04x}"
    if kind == UNDECODED_GRE:
        return f"GRE carrying protocol 0x{value:04x}"
    if kind == UNDECODED_GRE_VERSION:
        return f"GRE version {value}"
    if kind == UNDECODED_FRAGMENT:
        return f"later IP fragments of protocol {value} (not reassembled)"
    if kind == UNDECODED_MPLS:
        return f"MPLS payloads starting with nibble {value} (a pseudowire?)"
    if kind == UNDECODED_PPP:
        return f"PPP protocol 0x{value:04x}"
    if kind == UNDECODED_DEPTH:
        return "tunnels nested too deep"
    if kind == UNDECODED_WLAN:
        return _WLAN.get(value, "802.11 frames")
    if kind == UNDECODED_UDP_TUNNEL:
        return f"UDP port {value} tunnel payloads"
    return "headers of other kinds"


class UndecodedCount:
    """The counts of the chunks decoded so far, per kind (``key``: kind << 16 | value)."""

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()

    def add(self, undecoded: I64, undecoded_n: I64) -> None:
        """One chunk's per-part tables (see ``decode.decode_packets``): few rows, from Python."""
        for p in np.flatnonzero(undecoded_n | undecoded[:, UNDECODED_SLOTS - 1, 1]).tolist():
            n = int(undecoded_n[p])
            for key, count in undecoded[p, :n].tolist():
                self.counts[key] += count
            others = int(undecoded[p, UNDECODED_SLOTS - 1, 1])
            if others:
                self.counts[-1] += others

    def warning(self) -> str | None:
        """One sentence naming what was not decoded, most frequent first (then by kind and
        value); None if nothing."""
        total = sum(self.counts.values())
        if not total:
            return None
        ranked = sorted(self.counts.items(), key=lambda kc: (-kc[1], kc[0]))
        named = [(key, count) for key, count in ranked if key >= 0][:NAMED]
        rest = total - sum(count for _, count in named)
        parts = [f"{count:,} {_kind_text(key)}" for key, count in named]
        if rest:
            parts.append(f"{rest:,} of other kinds")
        packets = "packet was" if total == 1 else "packets were"
        return (
            f"{total:,} {packets} not decoded down to a TCP or UDP header, so any TCP they carry "
            f"is not analysed: {'; '.join(parts)}."
        )
