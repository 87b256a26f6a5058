"""Link layers: where the IP header starts in a captured frame, and which IP version it is.

Link-type numbers are the LINKTYPE_* values of https://www.tcpdump.org/linktypes.html.
"""

from __future__ import annotations

from tcplens.capture.compiled import byte, inline_kernel, read_u16, read_u32
from tcplens.capture.table import U8

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
ARPHRD_NETLINK = 824  # SLL/SLL2 frames from a netlink socket carry no ethertype

# what the link layer says comes next
NEXT_OTHER = 0  # not IP (ARP, LLC, ...)
NEXT_IPV4 = 4
NEXT_IPV6 = 6
NEXT_SHORT = -1  # the frame ends inside the link header
NEXT_UNSUPPORTED = -2  # a link type this reader does not decode


@inline_kernel
def _from_ethertype(ethertype: int) -> int:
    if ethertype == ETHERTYPE_IPV4:
        return NEXT_IPV4
    if ethertype == ETHERTYPE_IPV6:
        return NEXT_IPV6
    return NEXT_OTHER


@inline_kernel
def _from_address_family(family: int) -> int:
    if family == 2:  # AF_INET everywhere
        return NEXT_IPV4
    if family in (10, 24, 28, 30):  # AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
        return NEXT_IPV6
    return NEXT_OTHER


@inline_kernel
def skip_link_header(buf: U8, pos: int, end: int, link_type: int) -> tuple[int, int]:
    """Return ``(next, ip_offset)``: one of the ``NEXT_*`` codes and where the IP header starts."""
    if link_type == LINKTYPE_ETHERNET:
        if end - pos < 14:
            return NEXT_SHORT, pos
        ethertype = read_u16(buf, pos + 12, True)
        pos += 14
        tags = 0
        while ethertype in VLAN_TPIDS and tags < MAX_VLAN_TAGS:
            if end - pos < 4:
                return NEXT_SHORT, pos
            ethertype = read_u16(buf, pos + 2, True)
            pos += 4
            tags += 1
        return _from_ethertype(ethertype), pos
    if link_type == LINKTYPE_LINUX_SLL:
        if end - pos < 16:
            return NEXT_SHORT, pos
        if read_u16(buf, pos + 2, True) == ARPHRD_NETLINK:
            return NEXT_OTHER, pos + 16
        return _from_ethertype(read_u16(buf, pos + 14, True)), pos + 16
    if link_type == LINKTYPE_LINUX_SLL2:
        if end - pos < 20:
            return NEXT_SHORT, pos
        if read_u16(buf, pos + 8, True) == ARPHRD_NETLINK:
            return NEXT_OTHER, pos + 20
        return _from_ethertype(read_u16(buf, pos, True)), pos + 20
    if link_type == LINKTYPE_RAW:
        if end - pos < 1:
            return NEXT_SHORT, pos
        version = byte(buf, pos) >> 4
        if version == 4:
            return NEXT_IPV4, pos
        if version == 6:
            return NEXT_IPV6, pos
        return NEXT_OTHER, pos
    if link_type == LINKTYPE_IPV4:
        return NEXT_IPV4, pos
    if link_type == LINKTYPE_IPV6:
        return NEXT_IPV6, pos
    if link_type in (LINKTYPE_NULL, LINKTYPE_LOOP):
        if end - pos < 4:
            return NEXT_SHORT, pos
        family = read_u32(buf, pos, True)
        if link_type == LINKTYPE_NULL and family & 0xFFFF0000:
            # written by a little-endian host: the family sits in the first bytes (Wireshark does
            # the same guess in packet-null.c)
            family = read_u32(buf, pos, False)
        return _from_address_family(family), pos + 4
    return NEXT_UNSUPPORTED, pos
