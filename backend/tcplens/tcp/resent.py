"""Re-sent data: segments carrying sequence space their sender had already sent.

This is *the* retransmission count tcplens shows (flow JSON, diagnosis, graph marks). It differs
from Wireshark's ``retransmission`` flag on purpose: Wireshark labels a re-sent segment
``out_of_order`` when the original left less than an RTT earlier (its timing heuristic,
packet-tcp.c ``tcp_analyze_sequence_number``), which is how SACK recovery looks at a
sender-side capture — 63 of the 67 re-sent segments of lossy_download. The ``events`` column
keeps Wireshark's names; this count is about the bytes themselves.

The per-packet pass (:mod:`tcplens.tcp.events`) applies the same rule as it walks each flow and
stores it as ``RESENT_FLAG`` of ``Segments.flags``, read as :attr:`Segments.resent`
(``backend/tests/tcp/test_resent.py`` checks it against :func:`resent`).

Example
-------
>>> import numpy as np
>>> resent(np.array([1, 11, 1, 21]), np.array([10, 10, 10, 10]), np.zeros(4, np.uint32)).tolist()
[False, False, True, False]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.model import KEEP_ALIVE, RETRANSMISSION, ZERO_WINDOW_PROBE

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


def resent(
    seq: npt.NDArray[np.integer],
    payload: npt.NDArray[np.integer],
    events: npt.NDArray[np.unsignedinteger],
    run_starts: I64 | None = None,
) -> B:
    """Data segments that start below the highest sequence number sent before them.

    Rows are the data segments (payload > 0) of one sender in capture order; with ``run_starts``
    (ascending row indices, the first 0) several senders are handled at once, each run on its
    own. Wireshark's ``retransmission`` flag counts too (a re-sent segment whose original the
    capture missed); keep-alives and zero-window probes re-send a byte by design and are not
    losses, so they never count.
    """
    n = seq.shape[0]
    out: B = np.zeros(n, np.bool_)
    if n == 0:
        return out
    start = seq.astype(np.int64)
    end = start + payload
    if run_starts is not None and run_starts.shape[0] > 1:
        # Shift each run above the previous one so that one running maximum serves all runs: a
        # run's first segment is then never below anything earlier (a segment-wise scan).
        lo = np.minimum.reduceat(start, run_starts)
        span = np.maximum.reduceat(end, run_starts) - lo + 1
        shift = np.repeat(np.cumsum(span) - span - lo, np.diff(np.append(run_starts, n)))
        start += shift
        end += shift
    running = np.maximum.accumulate(end)
    np.less(start[1:], running[:-1], out=out[1:])
    out |= (events & RETRANSMISSION) != 0
    out &= (events & (KEEP_ALIVE | ZERO_WINDOW_PROBE)) == 0
    return out
