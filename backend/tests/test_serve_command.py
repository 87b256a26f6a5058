"""``tcplens serve`` on an address another process already listens on: one line, an exit code,
and nothing started (no database, no worker)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tcplens.commands.serve import EXIT_CANNOT_LISTEN


def test_serve_refuses_a_port_in_use_up_front(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **os.environ,
            "TCPLENS_DATA_DIR": str(tmp_path / "data"),
            "TCPLENS_HOST": "127.0.0.1",
            "TCPLENS_PORT": str(port),
        }
        result = subprocess.run(
            [sys.executable, "-m", "tcplens.cli", "serve"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == EXIT_CANNOT_LISTEN == 3
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"tcplens serve: listening on 127.0.0.1:{port} is already in use; "
        "choose another with --port or TCPLENS_PORT"
    ]
    # Refused before anything started: no embedded database was created.
    assert not (tmp_path / "data").exists()
