"""Blob stores: where original captures and per-flow series files live.

Two implementations with one interface: a local directory (the default, one machine) and an
S3-compatible object store (any number of API and worker machines). Writers are streaming so an
upload is never held whole in memory: the local store appends to a temporary file beside the final
one and renames it on commit; the S3 store sends a multipart upload whose part buffer is bounded.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

# A blob key is a relative path made of safe segments; anything else is a programming error
# (keys are built by the service, never taken from a request).
_KEY = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")

# S3 multipart parts must be at least 5 MiB (except the last); 8 MiB keeps memory bounded.
S3_PART_SIZE = 8 * 1024 * 1024


class BlobNotFoundError(Exception):
    """The key names no blob (deleted, or never written)."""


def _checked(key: str) -> str:
    if not _KEY.match(key) or ".." in key.split("/"):
        raise ValueError(f"invalid blob key {key!r}")
    return key


class BlobWriter(Protocol):
    def write(self, chunk: bytes | bytearray) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None: ...


class BlobStore(Protocol):
    def open_writer(self, key: str) -> BlobWriter: ...
    def top_level(self, prefix: str) -> dict[str, float]: ...
    def remove_partial_writes(self, older_than: float) -> int: ...
    def put_bytes(self, key: str, data: bytes) -> None: ...
    def put_file(self, key: str, path: Path) -> None: ...
    def get_bytes(self, key: str) -> bytes: ...
    def open_reader(self, key: str) -> IO[bytes]: ...
    def size(self, key: str) -> int: ...
    def local_path(self, key: str) -> Path | None: ...
    def local_copy(
        self, key: str, scratch_dir: Path
    ) -> contextlib.AbstractContextManager[Path]: ...
    def delete_prefix(self, prefix: str) -> None: ...


# A local blob being written: renamed to its key on commit. A process killed mid-write leaves it
# behind for ``remove_partial_writes``.
PARTIAL_PREFIX = ".partial-"


class _LocalWriter:
    def __init__(self, root: Path, final: Path) -> None:
        final.parent.mkdir(parents=True, exist_ok=True)
        self._root = root
        self._final = final
        # mkstemp creates the file 0600: only the service's user reads captures.
        fd, tmp = tempfile.mkstemp(prefix=PARTIAL_PREFIX, dir=final.parent)
        self._tmp = Path(tmp)
        self._file = os.fdopen(fd, "wb")

    def write(self, chunk: bytes | bytearray) -> None:
        self._file.write(chunk)

    def commit(self) -> None:
        self._file.close()
        os.replace(self._tmp, self._final)

    def abort(self) -> None:
        self._file.close()
        self._tmp.unlink(missing_ok=True)
        _remove_empty_parents(self._final.parent, self._root)


def _remove_empty_parents(directory: Path, root: Path) -> None:
    """Remove ``directory`` and its parents below ``root`` while they are empty (a refused
    upload's ``captures/<id>/``)."""
    while directory != root and directory.is_relative_to(root):
        try:
            directory.rmdir()
        except OSError:  # not empty (or already gone): the parents are not empty either
            return
        directory = directory.parent


class LocalBlobStore:
    """Blobs as files under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / _checked(key)

    def open_writer(self, key: str) -> BlobWriter:
        return _LocalWriter(self.root, self._path(key))

    def put_bytes(self, key: str, data: bytes) -> None:
        writer = self.open_writer(key)
        try:
            writer.write(data)
        except BaseException:
            writer.abort()
            raise
        writer.commit()

    def put_file(self, key: str, path: Path) -> None:
        """Move ``path`` into the store (a rename when on the same file system)."""
        final = self._path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        # 0600 as the originals (mkstemp), before it is in place: only the service reads them.
        path.chmod(0o600)
        shutil.move(path, final)

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise BlobNotFoundError(key) from exc

    def open_reader(self, key: str) -> IO[bytes]:
        try:
            return self._path(key).open("rb")
        except FileNotFoundError as exc:
            raise BlobNotFoundError(key) from exc

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError as exc:
            raise BlobNotFoundError(key) from exc

    def local_path(self, key: str) -> Path | None:
        """The file itself (for memory-mapping); raises when there is none."""
        path = self._path(key)
        if not path.is_file():
            raise BlobNotFoundError(key)
        return path

    @contextlib.contextmanager
    def local_copy(self, key: str, scratch_dir: Path) -> Iterator[Path]:
        # The file already is local: no copy needed.
        path = self._path(key)
        if not path.exists():
            raise BlobNotFoundError(key)
        yield path

    def delete_prefix(self, prefix: str) -> None:
        target = self._path(prefix.rstrip("/"))
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)

    def top_level(self, prefix: str) -> dict[str, float]:
        """The names right under ``prefix`` (e.g. each capture's folder under ``captures``),
        each with the time of the newest file in it."""
        found: dict[str, float] = {}
        base = self._path(prefix.rstrip("/"))
        if not base.is_dir():
            return found
        for entry in base.iterdir():
            with contextlib.suppress(OSError):
                times = [entry.stat().st_mtime]
                if entry.is_dir():
                    times += [f.stat().st_mtime for f in entry.rglob("*")]
                found[entry.name] = max(times)
        return found

    def remove_partial_writes(self, older_than: float) -> int:
        """Delete files being written (``.partial-*``) last written before ``older_than``
        (a Unix time): what a process killed mid-upload left."""
        removed = 0
        for partial in list(self.root.rglob(PARTIAL_PREFIX + "*")):  # (removes folders)
            with contextlib.suppress(OSError):
                if partial.is_file() and partial.stat().st_mtime < older_than:
                    partial.unlink()
                    removed += 1
                    _remove_empty_parents(partial.parent, self.root)
        return removed


class _S3Writer:
    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self._client, self._bucket, self._key = client, bucket, key
        self._buffer = bytearray()
        self._parts: list[dict[str, Any]] = []
        self._upload_id: str | None = None

    def _flush_part(self) -> None:
        if self._upload_id is None:
            created = self._client.create_multipart_upload(Bucket=self._bucket, Key=self._key)
            self._upload_id = created["UploadId"]
        number = len(self._parts) + 1
        answer = self._client.upload_part(
            Bucket=self._bucket,
            Key=self._key,
            UploadId=self._upload_id,
            PartNumber=number,
            Body=bytes(self._buffer),
        )
        self._parts.append({"ETag": answer["ETag"], "PartNumber": number})
        self._buffer.clear()

    def write(self, chunk: bytes | bytearray) -> None:
        self._buffer += chunk
        while len(self._buffer) >= S3_PART_SIZE:
            rest = self._buffer[S3_PART_SIZE:]
            del self._buffer[S3_PART_SIZE:]
            self._flush_part()
            self._buffer += rest

    def commit(self) -> None:
        if self._upload_id is None:
            # Small object: one PUT instead of a multipart upload.
            self._client.put_object(Bucket=self._bucket, Key=self._key, Body=bytes(self._buffer))
            return
        if self._buffer:
            self._flush_part()
        self._client.complete_multipart_upload(
            Bucket=self._bucket,
            Key=self._key,
            UploadId=self._upload_id,
            MultipartUpload={"Parts": self._parts},
        )

    def abort(self) -> None:
        if self._upload_id is not None:
            self._client.abort_multipart_upload(
                Bucket=self._bucket, Key=self._key, UploadId=self._upload_id
            )
        self._buffer.clear()


class S3BlobStore:
    """Blobs as objects in an S3-compatible bucket, under an optional key prefix."""

    def __init__(
        self,
        bucket: str,
        *,
        prefix: str = "",
        endpoint_url: str | None = None,
        region: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> None:
        import boto3  # only deployments that use S3 pay for importing boto3

        self._client = boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region or "us-east-1",
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
        )
        self._bucket = bucket
        self._prefix = prefix.strip("/")

    def _key(self, key: str) -> str:
        _checked(key)
        return f"{self._prefix}/{key}" if self._prefix else key

    def ensure_bucket(self) -> None:
        existing = {b["Name"] for b in self._client.list_buckets().get("Buckets", [])}
        if self._bucket not in existing:
            self._client.create_bucket(Bucket=self._bucket)

    def open_writer(self, key: str) -> BlobWriter:
        return _S3Writer(self._client, self._bucket, self._key(key))

    def put_bytes(self, key: str, data: bytes) -> None:
        self._client.put_object(Bucket=self._bucket, Key=self._key(key), Body=data)

    def put_file(self, key: str, path: Path) -> None:
        # boto3's managed transfer: multipart, in parallel, from the file (never all in memory).
        self._client.upload_file(str(path), self._bucket, self._key(key))
        path.unlink(missing_ok=True)

    def _get(self, key: str) -> Any:
        try:
            return self._client.get_object(Bucket=self._bucket, Key=self._key(key))
        except self._client.exceptions.NoSuchKey as exc:
            raise BlobNotFoundError(key) from exc

    def get_bytes(self, key: str) -> bytes:
        body: bytes = self._get(key)["Body"].read()
        return body

    def open_reader(self, key: str) -> IO[bytes]:
        reader: IO[bytes] = self._get(key)["Body"]
        return reader

    def size(self, key: str) -> int:
        from botocore.exceptions import ClientError

        try:
            head = self._client.head_object(Bucket=self._bucket, Key=self._key(key))
        except ClientError as exc:
            raise BlobNotFoundError(key) from exc
        return int(head["ContentLength"])

    def local_path(self, key: str) -> Path | None:
        return None  # objects are fetched, not mapped

    @contextlib.contextmanager
    def local_copy(self, key: str, scratch_dir: Path) -> Iterator[Path]:
        scratch_dir.mkdir(parents=True, exist_ok=True)
        target = scratch_dir / f"blob-{uuid.uuid4().hex}"
        try:
            body = self._get(key)["Body"]
            with target.open("wb") as out:
                for chunk in body.iter_chunks(1024 * 1024):
                    out.write(chunk)
            yield target
        finally:
            target.unlink(missing_ok=True)

    def top_level(self, prefix: str) -> dict[str, float]:
        base = self._key(prefix.rstrip("/")) + "/"
        found: dict[str, float] = {}
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=base):
            for obj in page.get("Contents", []):
                name = obj["Key"][len(base) :].split("/", 1)[0]
                stamp = obj["LastModified"].timestamp()
                found[name] = max(stamp, found.get(name, stamp))
        return found

    def remove_partial_writes(self, older_than: float) -> int:
        """Abort multipart uploads begun before ``older_than`` (a Unix time): the parts a
        process killed mid-upload left, which the bucket keeps (and bills) until aborted."""
        removed = 0
        prefix = f"{self._prefix}/" if self._prefix else ""
        paginator = self._client.get_paginator("list_multipart_uploads")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=prefix):
            for upload in page.get("Uploads", []):
                if upload["Initiated"].timestamp() < older_than:
                    self._client.abort_multipart_upload(
                        Bucket=self._bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    removed += 1
        return removed

    def delete_prefix(self, prefix: str) -> None:
        full = self._key(prefix.rstrip("/"))
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=full):
            keys = [
                {"Key": obj["Key"]}
                for obj in page.get("Contents", [])
                if obj["Key"] == full or obj["Key"].startswith(full + "/")
            ]
            if keys:
                self._client.delete_objects(Bucket=self._bucket, Delete={"Objects": keys})
