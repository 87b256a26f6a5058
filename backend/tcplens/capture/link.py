"""Link layers: where the IP header starts in a captured frame, and which IP version it is.

Link-type numbers are the LINKTYPE_* values of https://www.tcpdump.org/linktypes.html.
Ethertypes (IEEE 802 numbers) are followed through VLAN tags, MPLS label stacks and PPPoE
sessions to the IP header (``ethertype_payload``); the tunnels found in IP (GRE, IP in IP,
VXLAN, ...) are in ``tunnels``.
"""

from __future__ import annotations

from tcplens.capture.compiled import byte, inline_kernel, read_u16, read_u32
from tcplens.capture.table import ENCAP_MPLS, ENCAP_PPPOE, ENCAP_VLAN, U8

LINKTYPE_NULL = 0  # BSD loopback: 4-byte address family in the capturing host's byte order
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101  # raw IPv4 or IPv6, told apart by the version nibble
LINKTYPE_LOOP = 108  # OpenBSD loopback: address family in network byte order
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276

DECODED_LINK_TYPES = (
    LINKTYPE_NULL, LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LOOP,
    LINKTYPE_LINUX_SLL, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL2,
)  # fmt: skip

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
# 802.1Q, 802.1ad (QinQ) and the pre-standard 0x9100 outer tag
VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
MAX_VLAN_TAGS = 8
ETHERTYPE_MPLS = 0x8847  # RFC 3032 §5: unicast
ETHERTYPE_MPLS_MULTICAST = 0x8848
MAX_MPLS_LABELS = 8
ETHERTYPE_PPPOE_SESSION = 0x8864  # RFC 2516 §4: the session stage, carrying PPP
PPP_IPV4 = 0x0021  # RFC 1332
PPP_IPV6 = 0x0057  # RFC 5072
PPP_CONTROL = 0x8000  # RFC 1661 §2: 0x8000-0xffff are the NCPs and LCP (no datagrams)
# ethertypes that never carry an IP datagram: ARP, Wake-on-LAN, RARP, AppleTalk (AARP), IPX,
# slow protocols (LACP), PPPoE discovery, EAPOL, MRP, LLDP, HomePlug, 802.1X pre-auth, PTP,
# TDLS, CFM, IEEE 1905, Realtek, loopback (each a standard's or vendor's own frames)
NOT_IP_ETHERTYPES = (
    0x0806, 0x0842, 0x8035, 0x809B, 0x80F3, 0x8137, 0x8809, 0x8863, 0x888E, 0x88E3,
    0x88CC, 0x88E1, 0x88C7, 0x88F5, 0x88F7, 0x890D, 0x8902, 0x893A, 0x8899, 0x9000,
)  # fmt: skip
MAX_LENGTH_FIELD = 0x05DC  # ≤ 1500: an 802.3 length, LLC follows (STP, CDP, NetBIOS, ...)
ARPHRD_NETLINK = 824  # SLL/SLL2 frames from a netlink socket carry no ethertype

# what the link layer says comes next
NEXT_OTHER = 0  # not IP (ARP, LLC, ...)
NEXT_ETHERTYPE = 1  # the payload of an ethertype (``ethertype_payload``)
NEXT_ETHERNET = 2  # an Ethernet header (inside a tunnel)
NEXT_IPV4 = 4
NEXT_IPV6 = 6
NEXT_SHORT = -1  # the frame ends inside the link header
NEXT_UNSUPPORTED = -2  # a link type this reader does not decode
NEXT_UNDECODED = -3  # a header this reader does not decode: counted per kind (``UNDECODED_*``)

# what was not decoded, counted per kind and value and named in one warning (``reader``)
UNDECODED_ETHERTYPE = 1  # value: the ethertype
UNDECODED_GRE = 2  # value: the GRE protocol type
UNDECODED_FRAGMENT = 3  # a later IP fragment (not reassembled); value: the IP protocol
UNDECODED_MPLS = 4  # value: the first nibble after the label stack (neither 4 nor 6)
UNDECODED_PPP = 5  # value: the PPP protocol
UNDECODED_DEPTH = 6  # more tunnel layers than ``MAX_LAYERS`` (or tags, or labels)
UNDECODED_WLAN = 7  # an 802.11 frame in a tunnel that cannot be read: value 1 protected, 2 A-MSDU
UNDECODED_UDP_TUNNEL = 8  # VXLAN / Geneve / GTP-U payload not decoded; value: the UDP port
UNDECODED_GRE_VERSION = 9  # value: the GRE version (RFC 2784 §2.3.1: 0, PPTP's 1)


@inline_kernel
def _from_address_family(family: int) -> int:
    if family == 2:  # AF_INET everywhere
        return NEXT_IPV4
    if family in (10, 24, 28, 30):  # AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
        return NEXT_IPV6
    return NEXT_OTHER


@inline_kernel
def skip_link_header(buf: U8, pos: int, end: int, link_type: int) -> tuple[int, int, int]:
    """Return ``(next, offset, ethertype)``: one of the ``NEXT_*`` codes, where what it names
    starts, and (``NEXT_ETHERTYPE``) the ethertype, for ``ethertype_payload``."""
    if link_type == LINKTYPE_ETHERNET:
        if end - pos < 14:
            return NEXT_SHORT, pos, 0
        return NEXT_ETHERTYPE, pos + 14, read_u16(buf, pos + 12, True)
    if link_type == LINKTYPE_LINUX_SLL:
        if end - pos < 16:
            return NEXT_SHORT, pos, 0
        if read_u16(buf, pos + 2, True) == ARPHRD_NETLINK:
            return NEXT_OTHER, pos + 16, 0
        return NEXT_ETHERTYPE, pos + 16, read_u16(buf, pos + 14, True)
    if link_type == LINKTYPE_LINUX_SLL2:
        if end - pos < 20:
            return NEXT_SHORT, pos, 0
        if read_u16(buf, pos + 8, True) == ARPHRD_NETLINK:
            return NEXT_OTHER, pos + 20, 0
        return NEXT_ETHERTYPE, pos + 20, read_u16(buf, pos, True)
    if link_type == LINKTYPE_RAW:
        if end - pos < 1:
            return NEXT_SHORT, pos, 0
        version = byte(buf, pos) >> 4
        if version == 4:
            return NEXT_IPV4, pos, 0
        if version == 6:
            return NEXT_IPV6, pos, 0
        return NEXT_OTHER, pos, 0
    if link_type == LINKTYPE_IPV4:
        return NEXT_IPV4, pos, 0
    if link_type == LINKTYPE_IPV6:
        return NEXT_IPV6, pos, 0
    if link_type in (LINKTYPE_NULL, LINKTYPE_LOOP):
        if end - pos < 4:
            return NEXT_SHORT, pos, 0
        family = read_u32(buf, pos, True)
        if link_type == LINKTYPE_NULL and family & 0xFFFF0000:
            # written by a little-endian host: the family sits in the first bytes (Wireshark does
            # the same guess in packet-null.c)
            family = read_u32(buf, pos, False)
        return _from_address_family(family), pos + 4, 0
    return NEXT_UNSUPPORTED, pos, 0


@inline_kernel
def ethertype_payload(
    buf: U8, pos: int, end: int, ethertype: int, layers: int
) -> tuple[int, int, int, int]:
    """From the payload of ``ethertype`` at ``pos`` to the IP header: ``(next, offset, value,
    layers)``, ``value`` naming what was not decoded (``NEXT_UNDECODED``: ``UNDECODED_*`` kind
    ``value >> 16``, its value the low 16 bits) and ``layers`` with the ``ENCAP_*`` bits of the
    headers crossed added.

    VLAN tags (IEEE 802.1Q, 802.1ad QinQ, the pre-standard 0x9100), at most ``MAX_VLAN_TAGS``;
    an MPLS label stack (RFC 3032 §2.1: 4 bytes a label, to the bottom-of-stack bit), at most
    ``MAX_MPLS_LABELS``, whose payload is told IPv4 or IPv6 by its first nibble as Wireshark
    guesses it (packet-mpls.c; a pseudowire control word starts with 0); a PPPoE session
    (RFC 2516 §4: 6 bytes, then the 2-byte PPP protocol of RFC 1661 §2).
    """
    tags = 0
    while ethertype in VLAN_TPIDS:
        if tags == MAX_VLAN_TAGS:
            return NEXT_UNDECODED, pos, (UNDECODED_DEPTH << 16) | tags, layers
        if end - pos < 4:
            return NEXT_SHORT, pos, 0, layers
        ethertype = read_u16(buf, pos + 2, True)
        pos += 4
        tags += 1
        layers |= ENCAP_VLAN
    if ethertype == ETHERTYPE_IPV4:
        return NEXT_IPV4, pos, 0, layers
    if ethertype == ETHERTYPE_IPV6:
        return NEXT_IPV6, pos, 0, layers
    if ethertype in (ETHERTYPE_MPLS, ETHERTYPE_MPLS_MULTICAST):
        layers |= ENCAP_MPLS
        for _ in range(MAX_MPLS_LABELS):
            if end - pos < 4:
                return NEXT_SHORT, pos, 0, layers
            bottom = byte(buf, pos + 2) & 1
            pos += 4
            if bottom:
                if end - pos < 1:
                    return NEXT_SHORT, pos, 0, layers
                nibble = byte(buf, pos) >> 4
                if nibble == 4:
                    return NEXT_IPV4, pos, 0, layers
                if nibble == 6:
                    return NEXT_IPV6, pos, 0, layers
                return NEXT_UNDECODED, pos, (UNDECODED_MPLS << 16) | nibble, layers
        return NEXT_UNDECODED, pos, (UNDECODED_DEPTH << 16) | MAX_MPLS_LABELS, layers
    if ethertype == ETHERTYPE_PPPOE_SESSION:
        if end - pos < 8:
            return NEXT_SHORT, pos, 0, layers
        layers |= ENCAP_PPPOE
        protocol = read_u16(buf, pos + 6, True)
        pos += 8
        if protocol == PPP_IPV4:
            return NEXT_IPV4, pos, 0, layers
        if protocol == PPP_IPV6:
            return NEXT_IPV6, pos, 0, layers
        if protocol >= PPP_CONTROL:
            return NEXT_OTHER, pos, 0, layers
        return NEXT_UNDECODED, pos, (UNDECODED_PPP << 16) | protocol, layers
    if ethertype <= MAX_LENGTH_FIELD or ethertype in NOT_IP_ETHERTYPES:
        return NEXT_OTHER, pos, 0, layers
    return NEXT_UNDECODED, pos, (UNDECODED_ETHERTYPE << 16) | ethertype, layers
