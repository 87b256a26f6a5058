from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
from fastapi.testclient import TestClient

from tcplens.main import create_app
from tcplens.settings import Settings


def test_app_without_an_engine_starts_migrates_and_stops_its_embedded_database(
    new_cluster_dir: Callable[[], Path],
) -> None:
    """What `make dev` (uvicorn --factory, --reload) relies on: the app brings its own database up
    and takes it down again at shutdown, since reload workers never run atexit handlers."""
    scratch = new_cluster_dir().parent  # the data directory, with the server's files in postgres/
    try:
        settings = Settings(
            data_dir=scratch, spa_dir=scratch / "spa", in_process_worker=False, database_url=None
        )
        with TestClient(create_app(settings)) as client:
            assert client.get("/api/v1/health").json()["database"] == "ok"
            pid_file = scratch / "postgres" / "postmaster.pid"
            postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
            assert postmaster.is_running()
        postmaster.wait(timeout=30)
        assert not pid_file.exists()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_the_api_process_loads_no_analysis_kernels() -> None:
    """The web app reads the factor registry and compares stored reports without numba: the
    analyses run in the fork server's children (issue 30 item 9, memory at rest: importing
    numba, llvmlite and the kernels' modules cost the API process ~60 MiB)."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tcplens.main; print(sorted({'numba', 'llvmlite'} & set(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"
