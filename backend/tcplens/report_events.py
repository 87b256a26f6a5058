"""The ``events`` list of ``tcplens analyze --json --events`` (DESIGN.md), written as JSON text.

A busy capture has an event on every third packet (bulk_5M: 1.7M), and building one dict per
event for ``json.dumps`` cost ~2 µs each (the dicts, the garbage collector walking them, the
encoder) and hundreds of MB. Here a kernel writes the text straight from the Segments columns,
a bounded chunk at a time, into one reused buffer: the same bytes ``json.dumps`` writes for
``{"frame": int, "flow": int, "kinds": [EVENT]}`` with ``separators=(",", ":")``. Each distinct
bit mask's ``"kinds"`` text is made once, by ``json.dumps`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import inline_kernel, kernel
from tcplens.tcp.model import Segments, event_names

U8 = npt.NDArray[np.uint8]

#: Events encoded per kernel call: the buffer holds one chunk (~4 MB for typical kinds).
CHUNK_EVENTS = 1 << 16

_FRAME = b'{"frame":'
_FLOW = b',"flow":'
_KINDS = b',"kinds":'
_DIGITS = 10  # the most decimal digits of a frame number (uint32) or a flow id (int32)
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode("ascii"), np.uint8)


def event_rows(
    segments: Segments,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int32], npt.NDArray[np.uint16]]:
    """Frame, 1-based flow id and event bit mask of every segment with an event, in frame order.

    Gathered flow by flow (each slice's flow is known there, no search per row), then sorted by
    frame: a frame is at most one segment, so the order is total, and the gather is a few
    hundred sorted runs (one per direction of a flow), which the stable sort merges."""
    frames, flows, masks = _flow_major_events(segments.offsets, segments.frame, segments.events)
    order = np.argsort(frames, kind="stable")
    return frames[order], flows[order], masks[order]


def write_events(
    write: Callable[[memoryview], object],
    frames: npt.NDArray[np.uint32],
    flows: npt.NDArray[np.int32],
    masks: npt.NDArray[np.uint16],
    *,
    chunk_events: int = CHUNK_EVENTS,
) -> None:
    """Write the JSON array of the events ``frames``/``flows``/``masks`` (``event_rows``) with
    ``write``, a chunk at a time; each chunk is a view of one buffer reused for the next, so
    ``write`` must be done with it when it returns (a file's or a stream's ``write`` is)."""
    present = np.flatnonzero(np.bincount(masks)) if masks.size else np.zeros(0, np.int64)
    tails = [_KINDS + _compact(event_names(int(m))).encode("ascii") + b"}" for m in present]
    tail_start = np.zeros(len(present) + 1, np.int64)
    np.cumsum([len(t) for t in tails], out=tail_start[1:])
    tail_of_mask = np.zeros(int(present[-1]) + 1 if present.size else 1, np.int64)
    tail_of_mask[present] = np.arange(len(present))
    tail_text = np.frombuffer(b"".join(tails) or b"\0", np.uint8)
    widest = 1 + len(_FRAME) + _DIGITS + len(_FLOW) + _DIGITS + max(map(len, tails), default=0)
    buffer = np.empty(max(min(chunk_events, len(frames)), 1) * widest, np.uint8)
    frame_text, flow_text = np.frombuffer(_FRAME, np.uint8), np.frombuffer(_FLOW, np.uint8)
    view = memoryview(buffer)  # type: ignore[arg-type]
    write(memoryview(b"["))
    for start in range(0, len(frames), chunk_events):  # chunks of events, not packets
        stop = start + chunk_events
        size = _encode(
            frames[start:stop], flows[start:stop], masks[start:stop], start == 0,
            frame_text, flow_text, tail_of_mask, tail_start, tail_text, _PAIRS, buffer,
        )  # fmt: skip
        write(view[:size])
    write(memoryview(b"]"))


def _compact(value: object) -> str:
    """``json.dumps`` as ``tcplens analyze`` prints: no spaces."""
    return json.dumps(value, separators=(",", ":"))


@kernel
def _flow_major_events(
    offsets: npt.NDArray[np.int64], frame: npt.NDArray[np.uint32], events: npt.NDArray[np.uint16]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int32], npt.NDArray[np.uint16]]:
    """Frame, 1-based flow id and mask of each row with an event, flow by flow (rows of slice
    ``k = 2 * flow + direction`` are ``offsets[k]:offsets[k + 1]``)."""
    count = 0
    for r in range(np.uint64(events.size)):
        count += events[r] != 0
    frames = np.empty(count, np.uint32)
    flows = np.empty(count, np.int32)
    masks = np.empty(count, np.uint16)
    i = np.uint64(0)
    for k in range(np.uint64(offsets.size - 1)):
        for r in range(np.uint64(offsets[k]), np.uint64(offsets[k + np.uint64(1)])):
            if events[r] != 0:
                frames[i] = frame[r]
                flows[i] = (k >> np.uint64(1)) + np.uint64(1)
                masks[i] = events[r]
                i += np.uint64(1)
    return frames, flows, masks


@kernel
def _encode(
    frames: npt.NDArray[np.uint32],
    flows: npt.NDArray[np.int32],
    masks: npt.NDArray[np.uint16],
    first: bool,
    frame_text: U8,
    flow_text: U8,
    tail_of_mask: npt.NDArray[np.int64],
    tail_start: npt.NDArray[np.int64],
    tail_text: U8,
    pairs: U8,
    out: U8,
) -> int:
    """``{"frame":F,"flow":L,"kinds":[...]}`` per event, comma-separated (a leading comma
    unless ``first``: the chunk continues the array), into ``out``; returns the bytes written.

    Positions are unsigned: with signed ones numba wraps negative indices around, a select per
    byte that keeps the copies from being vectorised (3-4x slower here)."""
    pos = np.uint64(0)
    for i in range(frames.size):
        if i > 0 or not first:
            out[pos] = 44  # ","
            pos += np.uint64(1)
        pos = _put(out, pos, frame_text, 0, frame_text.size)
        pos = _decimal(out, pos, np.uint64(frames[i]), pairs)
        pos = _put(out, pos, flow_text, 0, flow_text.size)
        pos = _decimal(out, pos, np.uint64(flows[i]), pairs)
        k = tail_of_mask[masks[i]]
        pos = _put(out, pos, tail_text, tail_start[k], tail_start[k + 1])
    return int(pos)


@inline_kernel
def _put(out: U8, pos: np.uint64, text: U8, start: int, stop: int) -> np.uint64:
    """Copy ``text[start:stop]`` to ``out`` at ``pos``; returns the position after it."""
    first = np.uint64(start)
    for j in range(np.uint64(stop) - first):
        out[pos + j] = text[first + j]
    return pos + np.uint64(stop) - first


@inline_kernel
def _decimal(out: U8, pos: np.uint64, value: np.uint64, pairs: U8) -> np.uint64:
    """``value`` in decimal, as ``json.dumps`` writes an int, at ``pos``; returns the position
    after it. Two digits per division (``pairs``: "00" to "99")."""
    one, two, ten, hundred = np.uint64(1), np.uint64(2), np.uint64(10), np.uint64(100)
    digits, rest = one, value
    while rest >= ten:
        rest //= ten
        digits += one
    end = pos + digits
    j = end
    while value >= hundred:
        pair = two * (value % hundred)
        out[j - one] = pairs[pair + one]
        out[j - two] = pairs[pair]
        j -= two
        value //= hundred
    if value >= ten:
        out[j - one] = pairs[two * value + one]
        out[j - two] = pairs[two * value]
    else:
        out[j - one] = np.uint64(48) + value  # "0" + value
    return end
