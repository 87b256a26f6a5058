"""The bytes of an upload as an async stream of chunks, from either request shape:

* ``multipart/form-data`` with a field ``file`` (browsers): parsed incrementally with
  python-multipart's push parser, so the file part is never spooled to a temporary file
  (Starlette's ``request.form()`` would spool it to disk, unbounded);
* any other body (scripts: ``curl --data-binary @x.pcap``) is the file itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import Request
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from tcplens.errors import InvalidInput
from tcplens.services.captures import UploadTooLarge

FILE_FIELD = "file"
# Slack for the multipart envelope (boundaries, part headers, small fields) around the file.
MULTIPART_OVERHEAD = 64 * 1024


class MalformedUpload(InvalidInput):
    code = "malformed_upload"


class _FilePart:
    """Collects the data of the ``file`` part as the parser finds it."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.filename: str | None = None
        self.found = False
        self.finished = False
        self._in_file = False
        self._header_field = b""
        self._header_value = b""
        self._headers: dict[bytes, bytes] = {}

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": self._header_field_data,
            "on_header_value": self._header_value_data,
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        }

    def _part_begin(self) -> None:
        self._headers = {}
        self._in_file = False

    # python-multipart caps a part's headers (4 KiB each, 8 of them): these stay small.
    def _header_field_data(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]

    def _header_value_data(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def _header_end(self) -> None:
        self._headers[self._header_field.lower()] = self._header_value
        self._header_field = self._header_value = b""

    def _headers_finished(self) -> None:
        disposition = self._headers.get(b"content-disposition", b"")
        _, params = parse_options_header(disposition)
        name = params.get(b"name", b"").decode("utf-8", "replace")
        if name == FILE_FIELD and not self.found:
            self.found = True
            self._in_file = True
            raw = params.get(b"filename")
            self.filename = raw.decode("utf-8", "replace") if raw is not None else None

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        # Other fields are ignored (their bytes are dropped, never kept).
        if self._in_file:
            self.chunks.append(bytes(data[start:end]))

    def _part_end(self) -> None:
        if self._in_file:
            self._in_file = False
            self.finished = True


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


async def multipart_file(
    request: Request, limit_bytes: int
) -> tuple[str | None, AsyncIterator[bytes]]:
    """The ``file`` field's name and bytes. The file name is known only once its part's headers
    have been read, so the first chunks are read here before returning.

    The whole body counts against ``limit_bytes`` (plus the envelope), not only the file's bytes:
    other fields are dropped unread and would otherwise let a body sent chunked, without
    Content-Length, run on forever before the file part."""
    _, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if not boundary or len(boundary) > 200:
        raise MalformedUpload("multipart/form-data without a boundary")
    part = _FilePart()
    parser = MultipartParser(boundary, part.callbacks())  # type: ignore[arg-type]
    body = request.stream()
    received = 0

    async def feed_until_file_data() -> bool:
        nonlocal received
        async for chunk in body:
            received += len(chunk)
            if received > limit_bytes + MULTIPART_OVERHEAD:
                raise UploadTooLarge(
                    f"the upload is larger than the limit of {limit_bytes} bytes",
                    limit_bytes=limit_bytes,
                )
            try:
                parser.write(chunk)
            except MultipartParseError as exc:
                raise MalformedUpload(f"malformed multipart body: {exc}") from exc
            if part.chunks or part.finished:
                return True
        return False

    await feed_until_file_data()
    if not part.found:
        raise MalformedUpload(f"the multipart body has no field named {FILE_FIELD!r}", field="file")

    async def chunks() -> AsyncIterator[bytes]:
        while True:
            while part.chunks:
                yield part.chunks.pop(0)
            if part.finished:
                return
            if not await feed_until_file_data():
                if not part.finished:
                    raise MalformedUpload("the multipart body ended inside the file")
                while part.chunks:
                    yield part.chunks.pop(0)
                return

    return part.filename, chunks()


async def raw_body(request: Request) -> AsyncIterator[bytes]:
    async for chunk in request.stream():
        yield chunk
