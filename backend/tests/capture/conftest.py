"""Fixtures for the reader tests."""

from __future__ import annotations

import shutil

import pytest

from tests.capture.shared_captures import Tshark


@pytest.fixture(scope="session")
def tshark() -> Tshark:
    if shutil.which("tshark") is None:
        pytest.fail("tshark is not installed: `make test` installs it (Debian package tshark)")
    return Tshark()
