"""Reader: pcap/pcapng (+gzip/zstd) bytes → columnar packet table.

Pure: reads only what it is given. Importing this package is cheap; numba and the compiled
kernels load on the first ``read_capture``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from tcplens.capture.compression import DEFAULT_MAX_BYTES, sniff_format
from tcplens.capture.errors import (
    CaptureError,
    CaptureReadError,
    CaptureTooLargeError,
    CompressionError,
    MalformedCaptureError,
    NotACaptureError,
    UnsupportedCaptureError,
)

if TYPE_CHECKING:
    from tcplens.capture.table import Capture


def read_capture(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> Capture:
    """Read a pcap or pcapng capture (optionally gzip- or zstd-compressed) into columns.

    ``progress(bytes_done, bytes_total)``: see ``tcplens.capture.progress``. See
    ``tcplens.capture.reader.read_capture``; this wrapper keeps numba out of the import.
    """
    from tcplens.capture.reader import read_capture as read

    return read(source, max_bytes=max_bytes, progress=progress)


__all__ = [
    "DEFAULT_MAX_BYTES",
    "CaptureError",
    "CaptureReadError",
    "CaptureTooLargeError",
    "CompressionError",
    "MalformedCaptureError",
    "NotACaptureError",
    "UnsupportedCaptureError",
    "read_capture",
    "sniff_format",
]
