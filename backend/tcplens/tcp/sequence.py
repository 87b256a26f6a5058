"""Relative, unwrapped sequence and acknowledgment numbers (RFC 1982 serial arithmetic).

Wireshark shows sequence numbers relative to each direction's ISN. We do the same and also
unwrap them to ``int64``: consecutive numbers of one direction are read as a signed 32-bit
step from the previous one, then summed, so a transfer that crosses 2**32 keeps growing
instead of jumping back to 0. Everything is vectorised across all flows at once: the input is
sorted by ``(flow, direction)`` and the cumulative sums restart at each group's first row.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]


def unwrap_relative(values: U32, base: U32, group_start: B) -> I64:
    """Unwrap 32-bit sequence numbers relative to ``base``, restarting at each group.

    Parameters
    ----------
    values
        Raw 32-bit sequence (or acknowledgment) numbers, grouped contiguously.
    base
        The reference number (ISN) for each row; constant within a group.
    group_start
        True on the first row of each group.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([4294967290, 4294967295, 3, 10, 1], dtype=np.uint32)
    >>> b = np.array([4294967289] * 4 + [0], dtype=np.uint32)
    >>> s = np.array([True, False, False, False, True])
    >>> unwrap_relative(v, b, s).tolist()
    [1, 6, 10, 17, 1]
    """
    n = values.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    step = np.empty(n, dtype=np.int64)
    step[1:] = (values[1:] - values[:-1]).view(np.int32)
    first = (values - base).view(np.int32).astype(np.int64)
    step[group_start] = first[group_start]
    total = np.cumsum(step)
    starts = np.flatnonzero(group_start)
    offset = total[starts] - step[starts]
    group = np.cumsum(group_start) - 1
    rel: I64 = total - offset[group]
    return rel
