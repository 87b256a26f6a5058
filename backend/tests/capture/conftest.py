"""Fixtures for the reader tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tcplens.capture.memory import release_warm_reserve
from tests.capture.shared_captures import Tshark


@pytest.fixture(scope="session")
def tshark() -> Tshark:
    if shutil.which("tshark") is None:
        pytest.fail("tshark is not installed: `make test` installs it (Debian package tshark)")
    return Tshark()


@pytest.fixture(autouse=True)
def _no_reserve_left() -> Iterator[None]:
    """A test that maps a capture ahead without reading it leaves its pages made ahead (the
    reader lets them go): none may reach the next test's memory."""
    yield
    release_warm_reserve()
