"""Tunnels found inside IP: GRE (with ERSPAN, Aruba's 802.11 and PPTP's PPP), and VXLAN, Geneve
and GTP-U over UDP; each returns what comes next as ``link.ethertype_payload`` does: ``(next,
offset, value, layers)``, ``layers`` the ``ENCAP_*`` bits of the headers crossed.

IP in IP (protocols 4 and 41) needs no header of its own: ``headers.decode_row`` reads the inner
IP header next. These run only for tunnelled packets (not inlined: a call each).
"""

from __future__ import annotations

from tcplens.capture.compiled import byte, kernel, read_u16
from tcplens.capture.link import (
    ETHERTYPE_IPV4,
    ETHERTYPE_IPV6,
    ETHERTYPE_MPLS,
    ETHERTYPE_MPLS_MULTICAST,
    ETHERTYPE_PPPOE_SESSION,
    NEXT_ETHERNET,
    NEXT_ETHERTYPE,
    NEXT_IPV4,
    NEXT_IPV6,
    NEXT_OTHER,
    NEXT_SHORT,
    NEXT_UNDECODED,
    PPP_CONTROL,
    PPP_IPV4,
    PPP_IPV6,
    UNDECODED_GRE,
    UNDECODED_GRE_VERSION,
    UNDECODED_PPP,
    UNDECODED_UDP_TUNNEL,
    UNDECODED_WLAN,
    VLAN_TPIDS,
)
from tcplens.capture.table import (
    ENCAP_ERSPAN,
    ENCAP_GENEVE,
    ENCAP_GRE,
    ENCAP_GTPU,
    ENCAP_VXLAN,
    ENCAP_WLAN,
    U8,
)

NEXT_WLAN = 3  # an IEEE 802.11 frame without FCS (``wlan``)

# GRE flags (RFC 2784 §2, RFC 2890 §2, RFC 1701 §2.1 for routing, RFC 2637 §4.1 for PPTP's ack)
GRE_CHECKSUM = 0x8000
GRE_ROUTING = 0x4000
GRE_KEY = 0x2000
GRE_SEQUENCE = 0x1000
GRE_ACK = 0x0080
GRE_VERSION = 0x0007
GRE_TEB = 0x6558  # transparent Ethernet bridging: an Ethernet frame follows
GRE_ERSPAN_II = 0x88BE  # ERSPAN type II (8-byte header), or type I (none) without sequence numbers
GRE_ERSPAN_III = 0x22EB  # ERSPAN type III: 12 bytes, +8 with the platform subheader (O bit)
GRE_PPP = 0x880B  # PPTP (GRE version 1)
# the protocol types that are ethertypes ``link.ethertype_payload`` follows (and VLAN_TPIDS)
GRE_ETHERTYPES = (
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MPLS, ETHERTYPE_MPLS_MULTICAST,
    ETHERTYPE_PPPOE_SESSION,
)  # fmt: skip
# Aruba's access points carry 802.11 frames in GRE with these protocol types (Wireshark's
# packet-gre.h: GRE_ARUBA_8200 ... GRE_ARUBA_8370 by 0x10, and GRE_ARUBA_9000)
GRE_ARUBA_FIRST = 0x8200
GRE_ARUBA_LAST = 0x8370
GRE_ARUBA_9000 = 0x9000

VXLAN_PORT = 4789  # RFC 7348 §5 (IANA)
GENEVE_PORT = 6081  # RFC 8926 §3.3
GTPU_PORT = 2152  # 3GPP TS 29.281 §4.4.2.3
GTPU_GPDU = 0xFF  # a G-PDU: a user IP packet follows
MAX_GTPU_EXTENSIONS = 8


@kernel
def _ppp(buf: U8, pos: int, end: int, layers: int) -> tuple[int, int, int, int]:
    """A PPP frame (RFC 1661 §2) in HDLC-like framing (RFC 1662 §3.1) whose address and control
    fields may be compressed away (RFC 1661 §6.6), as is its protocol's first byte when 0
    (§6.5: an odd first byte is the whole protocol)."""
    if end - pos < 2:
        return NEXT_SHORT, pos, 0, layers
    if byte(buf, pos) == 0xFF and byte(buf, pos + 1) == 0x03:
        pos += 2
    if end - pos < 1:
        return NEXT_SHORT, pos, 0, layers
    if byte(buf, pos) & 1:
        protocol = byte(buf, pos)
        pos += 1
    elif end - pos < 2:
        return NEXT_SHORT, pos, 0, layers
    else:
        protocol = read_u16(buf, pos, True)
        pos += 2
    if protocol == PPP_IPV4:
        return NEXT_IPV4, pos, 0, layers
    if protocol == PPP_IPV6:
        return NEXT_IPV6, pos, 0, layers
    if protocol >= PPP_CONTROL:
        return NEXT_OTHER, pos, 0, layers
    return NEXT_UNDECODED, pos, (UNDECODED_PPP << 16) | protocol, layers  # e.g. MPPE's 0x00fd


@kernel
def gre(buf: U8, pos: int, end: int) -> tuple[int, int, int, int]:
    """The GRE header at ``pos`` (RFC 2784 §2.1; optional checksum, key and sequence number of
    RFC 2890 §2, 4 bytes each) and what it carries: an ethertype (IPv4, IPv6, MPLS, VLAN,
    PPPoE), an Ethernet frame (0x6558; ERSPAN I/II/III, Wireshark's packet-erspan.c: type II
    has an 8-byte header, type I none, told apart by the GRE sequence flag; type III 12 bytes,
    then an 8-byte platform subheader when its O bit is set), Aruba's 802.11 frames, or PPTP's
    PPP (version 1, RFC 2637 §4.1: a key always, an acknowledgement number with the A flag).
    RFC 1701 source routing (the R bit, obsolete) is not decoded."""
    if end - pos < 4:
        return NEXT_SHORT, pos, 0, ENCAP_GRE
    flags = read_u16(buf, pos, True)
    protocol = read_u16(buf, pos + 2, True)
    version = flags & GRE_VERSION
    if version > 1:
        return NEXT_UNDECODED, pos, (UNDECODED_GRE_VERSION << 16) | version, ENCAP_GRE
    if flags & GRE_ROUTING:
        return NEXT_UNDECODED, pos, (UNDECODED_GRE << 16) | protocol, ENCAP_GRE
    length = 4
    if flags & GRE_CHECKSUM:
        length += 4
    if flags & GRE_KEY:
        length += 4
    if flags & GRE_SEQUENCE:
        length += 4
    if version == 1 and flags & GRE_ACK:
        length += 4
    if end - pos < length:
        return NEXT_SHORT, pos, 0, ENCAP_GRE
    pos += length
    if version == 1:
        if protocol != GRE_PPP:
            return NEXT_UNDECODED, pos, (UNDECODED_GRE << 16) | protocol, ENCAP_GRE
        return _ppp(buf, pos, end, ENCAP_GRE)
    if protocol == GRE_TEB:
        return NEXT_ETHERNET, pos, 0, ENCAP_GRE
    if protocol == GRE_ERSPAN_II:
        if flags & GRE_SEQUENCE:
            if end - pos < 8:
                return NEXT_SHORT, pos, 0, ENCAP_GRE | ENCAP_ERSPAN
            pos += 8
        return NEXT_ETHERNET, pos, 0, ENCAP_GRE | ENCAP_ERSPAN
    if protocol == GRE_ERSPAN_III:
        if end - pos < 12:
            return NEXT_SHORT, pos, 0, ENCAP_GRE | ENCAP_ERSPAN
        pos += 12 + 8 * (byte(buf, pos + 11) & 1)
        return NEXT_ETHERNET, pos, 0, ENCAP_GRE | ENCAP_ERSPAN
    if (GRE_ARUBA_FIRST <= protocol <= GRE_ARUBA_LAST and protocol & 0xF == 0) or (
        protocol == GRE_ARUBA_9000
    ):
        return NEXT_WLAN, pos, 0, ENCAP_GRE
    if protocol in GRE_ETHERTYPES or protocol in VLAN_TPIDS:
        return NEXT_ETHERTYPE, pos, protocol, ENCAP_GRE
    return NEXT_UNDECODED, pos, (UNDECODED_GRE << 16) | protocol, ENCAP_GRE


@kernel
def wlan(buf: U8, pos: int, end: int) -> tuple[int, int, int, int]:
    """An IEEE 802.11 frame without FCS (IEEE 802.11-2020 §9.2.4.1, §9.3.2.1): a data frame's
    header (24 bytes, +6 with both DS bits, +2 QoS control, +4 HT control with the order bit on
    a QoS frame), then LLC/SNAP (RFC 1042: AA AA 03, OUI, ethertype). Management, control and
    null-data frames carry no datagram; protected (encrypted) frames and A-MSDUs are not
    decoded."""
    if end - pos < 24:
        return NEXT_SHORT, pos, 0, ENCAP_WLAN
    control = byte(buf, pos)
    ds = byte(buf, pos + 1)
    if control & 0x03 or (control >> 2) & 0x03 != 2 or control & 0x40:  # not a data frame with data
        return NEXT_OTHER, pos, 0, ENCAP_WLAN
    qos = pos + 24 + (6 if ds & 0x03 == 0x03 else 0)
    length = qos - pos
    if control & 0x80:  # QoS subtypes
        length += 2 + (4 if ds & 0x80 else 0)
    if ds & 0x40:
        return NEXT_UNDECODED, pos, (UNDECODED_WLAN << 16) | 1, ENCAP_WLAN
    if end - pos < length + 8:
        return NEXT_SHORT, pos, 0, ENCAP_WLAN
    if control & 0x80 and byte(buf, qos) & 0x80:
        return NEXT_UNDECODED, pos, (UNDECODED_WLAN << 16) | 2, ENCAP_WLAN
    pos += length
    if byte(buf, pos) != 0xAA or byte(buf, pos + 1) != 0xAA or byte(buf, pos + 2) != 0x03:
        return NEXT_OTHER, pos, 0, ENCAP_WLAN
    return NEXT_ETHERTYPE, pos + 8, read_u16(buf, pos + 6, True), ENCAP_WLAN


@kernel
def udp_tunnel(
    buf: U8, pos: int, end: int, src_port: int, dst_port: int
) -> tuple[int, int, int, int]:
    """The UDP payload at ``pos`` when it is a tunnel, by its port as Wireshark's dissectors
    register them: VXLAN (RFC 7348 §5: 8 bytes with the I flag set, then an Ethernet frame),
    Geneve (RFC 8926 §3.4: 8 bytes plus its options' length, then the protocol type as an
    ethertype) or GTP-U (3GPP TS 29.281 §5.1: a G-PDU of version 1, 8 bytes, 12 with any of the
    E, S, PN flags, then its extension headers, then an IP packet). ``NEXT_OTHER``: not one."""
    if end - pos < 8:
        return NEXT_OTHER, pos, 0, 0
    first = byte(buf, pos)
    if dst_port == VXLAN_PORT:
        if first & 0x08 == 0:
            return NEXT_OTHER, pos, 0, 0
        return NEXT_ETHERNET, pos + 8, 0, ENCAP_VXLAN
    if dst_port == GENEVE_PORT:
        if first >> 6 != 0:  # version 0 only
            return NEXT_OTHER, pos, 0, 0
        protocol = read_u16(buf, pos + 2, True)
        pos += 8 + (first & 0x3F) * 4
        if end < pos:
            return NEXT_SHORT, pos, 0, ENCAP_GENEVE
        if protocol == GRE_TEB:
            return NEXT_ETHERNET, pos, 0, ENCAP_GENEVE
        return NEXT_ETHERTYPE, pos, protocol, ENCAP_GENEVE
    if dst_port == GTPU_PORT or src_port == GTPU_PORT:
        if first >> 5 != 1 or first & 0x10 == 0 or byte(buf, pos + 1) != GTPU_GPDU:
            return NEXT_OTHER, pos, 0, 0  # GTP' or a signalling message (echo, error, ...)
        length = 12 if first & 0x07 else 8
        following = byte(buf, pos + 11) if first & 0x04 and end - pos >= 12 else 0
        for _ in range(MAX_GTPU_EXTENSIONS):
            if following == 0:
                break
            if end - pos < length + 1:
                return NEXT_SHORT, pos, 0, ENCAP_GTPU
            size = byte(buf, pos + length) * 4  # in 4-byte units, its next type in its last byte
            if size == 0 or end - pos < length + size:
                return NEXT_SHORT, pos, 0, ENCAP_GTPU
            following = byte(buf, pos + length + size - 1)
            length += size
        if following != 0 or end - pos < length + 1:
            return NEXT_UNDECODED, pos, (UNDECODED_UDP_TUNNEL << 16) | GTPU_PORT, ENCAP_GTPU
        pos += length
        version = byte(buf, pos) >> 4
        if version == 4:
            return NEXT_IPV4, pos, 0, ENCAP_GTPU
        if version == 6:
            return NEXT_IPV6, pos, 0, ENCAP_GTPU
        return NEXT_UNDECODED, pos, (UNDECODED_UDP_TUNNEL << 16) | GTPU_PORT, ENCAP_GTPU
    return NEXT_OTHER, pos, 0, 0
