"""Packet times that jump: named in one capture warning, and no duration is measured across them.

A capture's timestamps normally only move forward, by at most the quiet time between two
packets. Two files spliced together (``mergecap -a``, the test captures of nDPI and others), a
clock stepped by NTP or by hand while capturing, or a corrupted record header make them jump:
forward by hours or days, or backwards. A time difference across such a step is no duration:
the issue 27 captures gave RTT samples of 65,536 s (a seconds field off by 2^16). Wireshark
warns of none of it (it shows a negative ``frame.time_delta`` for a step back and nothing for a
jump forward).

A step is a packet whose time is ``JUMP_NS`` or more after the previous packet's in the file,
or ``BACK_NS`` or more before it. Smaller steps back happen when several interfaces' packets are
merged (each interface's buffer is written in turn): a time difference across them is off by
less than that, and a negative one is never used as an RTT (``tcp.rtt``).
"""

from __future__ import annotations

from tcplens.capture.compiled import inline_kernel
from tcplens.capture.table import I64, U32

# Forward: far longer than any round trip (Linux caps the retransmission timeout at 120 s,
# TCP_RTO_MAX), so no RTT sample can span one; a capture quiet for an hour is named too.
JUMP_NS = 3600 * 10**9
BACK_NS = 10**9  # NTP steps the clock for an offset over 128 ms (ntpd's step threshold)
NAMED_STEPS = 3  # steps described in the warning


@inline_kernel
def is_step(delta_ns: int) -> bool:
    """Whether a packet captured ``delta_ns`` after the one before it is a step of the clock.
    (The decoder looks at every row: ``decode.decode_packets``, ``steps_of_parts``.)"""
    return delta_ns >= JUMP_NS or delta_ns <= -BACK_NS


def steps_of_parts(part_first: I64, steps: I64, first_row: int) -> list[int]:
    """The table rows where the clock steps, ascending, in parts decoded by
    ``decode.decode_packets`` (``part_first``: the parts' first rows, from ``first_row`` of the
    table; ``steps``: what the decoder found in each)."""
    rows: list[int] = []
    for q in range(part_first.shape[0] - 1):
        if steps[q, 1]:  # the part's first row
            rows.append(first_row + int(part_first[q]))
        rows += steps[q, 2 : 2 + steps[q, 0]].tolist()
    return rows


def clock_warning(ts_ns: I64, rows: U32) -> str | None:
    """The words for the steps at ``rows``, or None when there is none.

    >>> import numpy as np
    >>> t = np.array([0, 1, 7200 * 10**9, 7200 * 10**9 - 5 * 10**9], np.int64)
    >>> clock_warning(t, np.array([2, 3], np.uint32))
    'Packet times jump at 2 places: frame 3 is 2.0 h after frame 2, frame 4 is 5.0 s before frame 3 (spliced captures or a clock step?); no time across a jump is taken as a round trip.'
    """
    if rows.shape[0] == 0:
        return None
    steps = []
    for row in rows[:NAMED_STEPS].tolist():
        delta = int(ts_ns[row] - ts_ns[row - 1])
        way = "after" if delta > 0 else "before"
        steps.append(f"frame {row + 1} is {_duration(abs(delta))} {way} frame {row}")
    more = rows.shape[0] - NAMED_STEPS
    places = "1 place" if rows.shape[0] == 1 else f"{rows.shape[0]:,} places"
    listed = ", ".join(steps) + (f" and {more:,} more" if more > 0 else "")
    return (
        f"Packet times jump at {places}: {listed} (spliced captures or a clock step?); no time "
        "across a jump is taken as a round trip."
    )


def _duration(ns: int) -> str:
    """A step's size in the largest unit that keeps it above 1.

    >>> _duration(90 * 10**9), _duration(3 * 86400 * 10**9), _duration(2 * 10**9)
    ('1.5 min', '3.0 days', '2.0 s')
    """
    seconds = ns / 1e9
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"
