"""Fixtures for the scenario lab tests: the lab package (e2e/lab) and its CI subset of captures.

``lab_capture`` runs one representative scenario per situation (``Scenario.ci``) once per test
session and yields the capture with its manifest entry. To assert something about every lab
capture, take ``lab_capture`` in a test; e.g. the diagnosis check is

    assert analyze(lab_capture.path).findings[0].factor == lab_capture.expected_primary_factor
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "e2e"))

from lab import netns, session  # noqa: E402
from lab.catalogue import catalogue  # noqa: E402
from lab.runner import LabCapture, make_capture  # noqa: E402
from lab.scenario import Scenario  # noqa: E402

CI_SCENARIOS = [s for s in catalogue() if s.ci]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "lab: makes real captures in network namespaces (needs root, ~1 min)"
    )


@pytest.fixture(scope="session")
def lab_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    reason = session.missing_requirements()
    if reason:
        pytest.skip(f"scenario lab cannot run here: {reason}")
    netns.remove_stale()
    yield tmp_path_factory.mktemp("lab")
    for ns in netns.own_namespaces():
        netns.delete_namespace(ns)


@pytest.fixture(scope="session", params=CI_SCENARIOS, ids=lambda s: s.name)
def lab_capture(request: pytest.FixtureRequest, lab_dir: Path) -> LabCapture:
    scenario: Scenario = request.param
    return make_capture(scenario, lab_dir)
