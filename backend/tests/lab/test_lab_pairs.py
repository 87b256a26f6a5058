"""Issue #29's proof on the lab's before/after pairs (``e2e/lab/catalogue/pairs.py``), made in
this run: for each, ``compare`` lists the cause as resolved, its speed-up is within 25 % of the
one the lab's client measured (``client.elapsed_s``, from its first DNS query or connect to the
last byte it read), BEFORE's prediction is within a factor 2 of AFTER's measured duration, and
the pair swapped reports the cause as new and a slow-down."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab.catalogue.pairs import Pair, pairs
from lab.runner import LabCapture, make_capture

from tcplens.capture import read_capture
from tcplens.diagnosis.comparison import compare_reports
from tcplens.report import analyse_capture

pytestmark = pytest.mark.lab


@pytest.fixture(scope="session", params=pairs(), ids=lambda p: p.name)
def lab_pair(request: pytest.FixtureRequest, lab_dir: Path) -> tuple[Pair, LabCapture, LabCapture]:
    pair: Pair = request.param
    return pair, make_capture(pair.before, lab_dir), make_capture(pair.after, lab_dir)


def test_compare_resolves_the_cause_and_measures_the_speedup(
    lab_pair: tuple[Pair, LabCapture, LabCapture],
) -> None:
    pair, before, after = lab_pair
    rb = analyse_capture(read_capture(before.path))[1]
    ra = analyse_capture(read_capture(after.path))[1]
    result = compare_reports(rb, ra, before.path.name, after.path.name)
    assert pair.cause in result["resolved"], result["summary"]
    measured = before.entry["client"]["elapsed_s"] / after.entry["client"]["elapsed_s"]
    assert abs(result["speedup"] / measured - 1) <= 0.25, (result["speedup"], measured)
    [t] = result["transfers"]
    [p] = [p for p in t["predictions"] if p["code"] == pair.cause]
    assert 0.5 <= p["duration_s"] / t["after_s"] <= 2.0, (p, t["after_s"])

    swapped = compare_reports(ra, rb, after.path.name, before.path.name)
    assert pair.cause in swapped["new"] and swapped["speedup"] < 1, swapped["summary"]
