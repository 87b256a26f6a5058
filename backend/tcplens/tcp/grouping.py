"""Group-wise reductions over rows sorted by an integer group key (segment-wise scans).

The analysis keeps every flow's rows in the same arrays, sorted by ``(flow, direction, ...)``;
per-group minima and maxima are then ``ufunc.reduceat`` over run starts, which
is how we vectorise across flows instead of looping over them in Python.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


def group_reduce(
    keys: npt.NDArray[np.integer], values: I64, n_groups: int, ufunc: np.ufunc, fill: int
) -> I64:
    """``ufunc``-reduce ``values`` per group; ``keys`` sorted ascending, in ``[0, n_groups)``.

    Groups without rows get ``fill``.

    Examples
    --------
    >>> import numpy as np
    >>> group_reduce(np.array([0, 0, 2]), np.array([5, 3, 7]), 4, np.minimum, -1).tolist()
    [3, -1, 7, -1]
    """
    out = np.full(n_groups, fill, dtype=np.int64)
    if keys.shape[0] == 0:
        return out
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    out[keys[starts]] = ufunc.reduceat(values, starts)
    return out
