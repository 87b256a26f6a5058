"""Blob stores: the local directory and an S3-compatible server (moto) started on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplens.storage.blobs import (
    S3_PART_SIZE,
    BlobNotFoundError,
    BlobStore,
    LocalBlobStore,
    S3BlobStore,
)
from tests.storage.s3_server import s3_endpoint  # noqa: F401  (fixture)


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
