"""The compiled searches of the period labelling give numpy's answers, bit for bit.

``diagnosis.search`` replaces ``np.searchsorted`` and ``np.interp`` with walks and gallops that
use what the labelling knows of its arrays (sorted, ascending). The labels are only what they
were if every answer is numpy's, also on the arrays a capture can hold: equal times, a clock
that stepped back (unsorted), NaN.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplens.diagnosis.search import (
    _ascending,
    _is_sorted,
    interp,
    search_ascending,
    search_one,
    search_shifted,
    searched_unsorted,
    searchsorted,
)

# few distinct values, so that equal keys and equal elements are common (the ties are where
# the sides differ); NaN sorts after every number in numpy
_VALUES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 10.0, np.nan])


@st.composite
def arrays(draw: st.DrawFn, min_size: int = 0) -> npt.NDArray[np.float64]:
    values = np.array(draw(st.lists(_VALUES, min_size=min_size, max_size=30)), np.float64)
    if draw(st.booleans()):
        values = np.sort(values)  # the common case: capture times in order
    return values


def _same(a: npt.NDArray[np.generic], b: npt.NDArray[np.generic]) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=300, deadline=None)
@given(arrays(), arrays(), st.booleans())
def test_searchsorted_is_numpys(arr, keys, right) -> None:  # type: ignore[no-untyped-def]
    side: Literal["left", "right"] = "right" if right else "left"
    assert _same(searchsorted(arr, keys, right), np.searchsorted(arr, keys, side=side))


@settings(max_examples=300, deadline=None)
@given(arrays(), arrays(), st.sampled_from([0.0, -0.5, 0.25]), st.booleans())
def test_shifted_searches_are_numpys(arr, x, a, right) -> None:  # type: ignore[no-untyped-def]
    """search_shifted (all keys), searched_unsorted + search_one (one key at a time, with the
    previous answer as hint) and search_ascending (keys that are a running maximum)."""
    side: Literal["left", "right"] = "right" if right else "left"
    b = -0.25
    want = np.searchsorted(arr, (x + a) + b, side=side)
    arr_sorted, x_sorted = _is_sorted(arr), _is_sorted(x)
    assert _same(search_shifted(arr, arr_sorted, x, x_sorted, a, b, right, -1), want - 1)
    unsorted = searched_unsorted(arr, arr_sorted, x, x_sorted, a, b, right)
    hint = 0
    for i in range(x.size):
        hint = search_one(arr, unsorted, x, i, a, b, right, hint)
        assert hint == want[i]
    rising = np.maximum.accumulate(x) if x.size else x
    if not np.isnan(rising).any():
        expected = np.searchsorted(arr, rising, side=side)
        assert _same(search_ascending(arr, arr_sorted, rising, right), expected)


@settings(max_examples=300, deadline=None)
@given(arrays(), arrays(min_size=1), st.data())
def test_interp_is_numpys(x, xp, data) -> None:  # type: ignore[no-untyped-def]
    fp = np.array(data.draw(st.lists(_VALUES, min_size=xp.size, max_size=xp.size)), np.float64)
    want = np.interp(x, xp, fp)
    assert _same(interp(x, xp, fp, False), want)
    if _is_sorted(x) and _ascending(xp):  # the walk, where the labelling takes it
        assert _same(interp(x, xp, fp, True), want)


def test_the_walks_are_taken_on_sorted_input() -> None:
    """The cases above reach the walks: sorted keys and points, ties and NaN keys at the end."""
    x = np.array([0.0, 1.0, 1.0, 2.5, np.nan])
    xp = np.array([0.5, 1.0, 1.0, 2.0, 3.0])
    fp = np.array([1.0, 2.0, 4.0, 3.0, 5.0])
    assert _is_sorted(x) and _ascending(xp) and not _ascending(x)
    assert _same(interp(x, xp, fp, True), np.interp(x, xp, fp))
    assert _same(
        search_shifted(xp, True, x, True, 0.0, 0.0, True, 0), np.searchsorted(xp, x, side="right")
    )
