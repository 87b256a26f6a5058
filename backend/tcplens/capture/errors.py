"""Reader errors: one small hierarchy, each with a stable ``code`` and a one-sentence message.

The API maps ``code`` to a problem+json type and the CLI prints ``str(error)`` on one line and
exits 3 (DESIGN.md). The message is written for the person who uploaded the file.
"""

from __future__ import annotations


class CaptureError(Exception):
    """A capture the reader cannot read. ``str(error)`` is one sentence meant for the user."""

    code = "capture_error"


class NotACaptureError(CaptureError):
    """The bytes are not a pcap or pcapng capture (nor a gzip/zstd-compressed one)."""

    code = "not_a_capture"


class UnsupportedCaptureError(CaptureError):
    """A capture format we recognise but do not read (e.g. a pcap variant or version)."""

    code = "unsupported_format"


class CaptureTooLargeError(CaptureError):
    """The capture (decompressed) is larger than the limit the caller set."""

    code = "too_large"


class MalformedCaptureError(CaptureError):
    """The file starts like a capture but its structure is broken before the first packet."""

    code = "malformed"


class CompressionError(CaptureError):
    """The gzip or zstd stream around the capture is corrupt."""

    code = "bad_compression"


class CaptureReadError(CaptureError):
    """The source could not be read (an I/O error, not a property of the capture)."""

    code = "unreadable"
