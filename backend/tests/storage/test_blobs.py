"""Blob stores: the local directory and an S3-compatible server (moto) started on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcplens.storage.blobs import (
    S3_PART_SIZE,
    BlobNotFoundError,
    BlobStore,
    LocalBlobStore,
    S3BlobStore,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("moto server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "local":
        return LocalBlobStore(tmp_path / "blobs")
    endpoint = request.getfixturevalue("s3_endpoint")
    s3 = S3BlobStore(
        f"tcplens-{tmp_path.name.lower().replace('_', '-')[:40]}",
        prefix="test",
        endpoint_url=endpoint,
        access_key_id="testing",
        secret_access_key="testing",
    )
    s3.ensure_bucket()
    return s3


def test_streamed_write_reads_back_byte_for_byte(store: BlobStore, tmp_path: Path) -> None:
    # More than two S3 parts, written in odd-sized chunks: exercises the multipart path.
    payload = bytes(range(256)) * ((2 * S3_PART_SIZE + 12345) // 256)
    writer = store.open_writer("captures/abc/original")
    for start in range(0, len(payload), 1_000_003):
        writer.write(payload[start : start + 1_000_003])
    writer.commit()
    assert store.size("captures/abc/original") == len(payload)
    with store.open_reader("captures/abc/original") as reader:
        assert reader.read() == payload
    with store.local_copy("captures/abc/original", tmp_path / "scratch") as path:
        assert path.read_bytes() == payload


def test_aborted_write_leaves_nothing(store: BlobStore) -> None:
    writer = store.open_writer("captures/gone/original")
    writer.write(b"x" * 100)
    writer.abort()
    with pytest.raises(BlobNotFoundError):
        store.get_bytes("captures/gone/original")


def test_delete_prefix_removes_a_captures_files_only(store: BlobStore) -> None:
    store.put_bytes("captures/one/original", b"1")
    store.put_bytes("captures/one/series/1.arrow", b"2")
    store.put_bytes("captures/one-other/original", b"3")
    store.delete_prefix("captures/one")
    with pytest.raises(BlobNotFoundError):
        store.get_bytes("captures/one/series/1.arrow")
    assert store.get_bytes("captures/one-other/original") == b"3"


def test_keys_cannot_escape_the_store(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "blobs")
    for key in ("../etc/passwd", "/abs", "a//b", "a/../b"):
        with pytest.raises(ValueError):
            store.put_bytes(key, b"")
