"""What the use cases need at run time, built once per process from the settings: the database
sessions, the blob store and the job queue. The API keeps one on ``app.state``; a worker builds its
own."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tcplens.settings import Settings
from tcplens.storage.blobs import BlobStore, LocalBlobStore, S3BlobStore
from tcplens.storage.series import SeriesFiles


@dataclass(frozen=True)
class ServiceContext:
    settings: Settings
    engine: Engine
    sessionmaker: sessionmaker[Session]
    store: BlobStore
    series: SeriesFiles


def build_context(
    settings: Settings, engine: Engine, sessions: sessionmaker[Session]
) -> ServiceContext:
    store = make_blob_store(settings)
    return ServiceContext(settings, engine, sessions, store, SeriesFiles(store))


def make_blob_store(settings: Settings) -> BlobStore:
    url = settings.storage_url
    if url is None or url.startswith("file://"):
        root = settings.blob_dir if url is None else settings.data_path / url[len("file://") :]
        return LocalBlobStore(root)
    if url.startswith("s3://"):
        bucket, _, prefix = url[len("s3://") :].partition("/")
        secret = settings.s3_secret_access_key
        store = S3BlobStore(
            bucket,
            prefix=prefix,
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region,
            access_key_id=settings.s3_access_key_id,
            secret_access_key=secret.get_secret_value() if secret else None,
        )
        store.ensure_bucket()
        return store
    raise ValueError(f"TCPLENS_STORAGE_URL must start with file:// or s3://, not {url!r}")
