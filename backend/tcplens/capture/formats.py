"""The capture files' fixed numbers and pcap's file header: plain Python, no compiled kernels.

The reader and the kernels of ``pcap`` and ``pcapng`` use them.

pcap: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcap/ (and libpcap's sf-pcap.c);
pcapng: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcapng/ §4.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from tcplens.capture.errors import NotACaptureError, UnsupportedCaptureError

FILE_HEADER_LEN = 24
RECORD_HEADER_LEN = 16

# magic as read little-endian → (big-endian file, nanosecond timestamps)
_MAGICS = {
    0xA1B2C3D4: (False, False),
    0xD4C3B2A1: (True, False),
    0xA1B23C4D: (False, True),
    0x4D3CB2A1: (True, True),
}
_MODIFIED_MAGICS = (0xA1B2CD34, 0x34CDB2A1)  # Alexey Kuznetzov's patched libpcap


@dataclass(frozen=True)
class PcapHeader:
    big_endian: bool
    nanoseconds: bool
    snaplen: int
    link_type: int  # LINKTYPE_*; the upper bits (FCS length) are dropped


def parse_file_header(header: bytes) -> PcapHeader:
    """Decode the pcap file header, or refuse the file with one sentence."""
    if len(header) < FILE_HEADER_LEN:
        raise NotACaptureError(
            f"The file is too short to be a pcap capture ({len(header)} bytes; "
            "the header alone is 24)."
        )
    (magic,) = struct.unpack_from("<I", header)
    if magic in _MODIFIED_MAGICS:
        raise UnsupportedCaptureError(
            "The file is a 'modified' (Kuznetzov) pcap, which tcplens does not read; "
            "convert it with `editcap -F pcap`."
        )
    if magic not in _MAGICS:
        raise NotACaptureError("The file is not a pcap capture (unknown magic number).")
    big, nanoseconds = _MAGICS[magic]
    major, _minor, _zone, _sigfigs, snaplen, link = struct.unpack_from(
        (">" if big else "<") + "HHiIII", header, 4
    )
    if major != 2:
        raise UnsupportedCaptureError(
            f"The pcap file has version {major}; tcplens reads version 2."
        )
    return PcapHeader(big, nanoseconds, snaplen, link & 0xFFFF)


# pcapng block types (§4) and the smallest block: type, length, trailing length
SHB = 0x0A0D0D0A
IDB = 0x00000001
OPB = 0x00000002
SPB = 0x00000003
EPB = 0x00000006
MIN_BLOCK = 12
