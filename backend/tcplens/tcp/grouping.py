"""Lay the TCP packets out flow by flow, and cut the flows into chunks for parallel passes.

Every later pass walks one flow at a time, so the packets are grouped by flow: each flow's
client → server packets, then its server → client ones, capture order within each — the order
of :class:`~tcplens.tcp.model.Segments` (``(flow, direction, frame)``), so a packet's position in
the layout is its Segments row and the per-packet pass writes every result, and the frame
number over the layout's row itself, at that position. Wireshark's state machine needs each
flow's two directions interleaved in capture order: the pass merges the two ascending lists.
:mod:`tcplens.tcp.flows` knows how many packets each flow has in each part of the capture and
direction, hence where each part's packets of a flow start in the layout (its "pieces"): the
layout is written in one parallel pass over the parts, each packet put at its piece's cursor
for its direction — a counting sort without a counting pass.

Flows are independent once grouped, so the passes run them in parallel (numba ``prange``) over
chunks of whole flows holding about the same number of packets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.tcp.compiled import kernel, parallel_kernel
from tcplens.tcp.conversations import BLOCK

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

# chunks per thread. Each worker of a parallel pass takes the next chunk not taken yet
# (``capture.compiled.take_next``), so a worker whose core is shared with other work takes fewer:
# numba's workqueue layer alone gives each thread one fixed block of consecutive prange
# iterations, with no work stealing, and the slowed thread kept its whole block (bulk_5M with a
# busy loop on one of the two cores, medians of 5: the per-packet pass 142 -> 105 ms, the
# timestamp pairs 21 -> 14 ms, the RTT samples 33 -> 25 ms; as fast as before on idle cores).
# Each chunk holds about the same number of packets, so the last one taken ends about when the
# others do.
CHUNKS_PER_THREAD = 8


@dataclass(frozen=True)
class FlowLayout:
    """The TCP packets grouped by flow and direction, capture order within each (Segments order)."""

    rows: I32  # PacketTable row of each packet, at its Segments row
    offsets: I64  # (2 n_flows + 1): Segments rows of direction d of flow f: [2f + d, 2f + d + 1]
    chunks: I64  # flow boundaries of the parallel chunks (ascending, first 0, last n_flows)

    @property
    def n_flows(self) -> int:
        return (int(self.offsets.shape[0]) - 1) // 2


def scatter_by_flow(
    bounds: I64,
    n_local: I64,
    tag: I32,
    first_piece: I32,
    pieces: tuple[I64, I64, I64],
    offsets: I64,
    rows_out: I32,
) -> FlowLayout:
    """The flow-major layout of the packets :mod:`tcplens.tcp.flows` tagged (see its step 3).

    ``bounds`` are the capture parts' row ranges, ``n_local`` their numbers of local
    conversations, ``tag`` each row's local conversation and direction (lower/higher endpoint),
    ``first_piece`` each local conversation's first piece (at ``bounds[part] + conversation``),
    ``pieces`` per piece its first row, the next piece of the same local conversation and, per
    lower/higher endpoint direction, its first position in the layout. The rows are written to
    ``rows_out`` (at least one value per TCP packet; the caller's work memory, not a fresh
    array: fresh pages are the main per-packet cost, issue 4).
    """
    n = int(offsets[-1])
    rows = rows_out[:n]
    piece_row, piece_next, piece_at = pieces
    _scatter(bounds, n_local, tag, first_piece, piece_row, piece_next, piece_at, rows)
    return FlowLayout(rows, offsets, flow_chunks(offsets))


def flow_chunks(offsets: I64) -> I64:
    """Flow boundaries of chunks of whole flows holding about the same number of packets."""
    return equal_work_parts(offsets[0::2], CHUNKS_PER_THREAD * numba.get_num_threads())


def equal_work_parts(bound: I64, parts: int) -> I64:
    """Boundaries of at most ``parts`` runs of consecutive items holding about the same work,
    none empty: ``bound`` is each item's first unit of work, then the total (CSR offsets, e.g.
    each flow's first packet). The parallel passes' workers take parts one at a time, so the
    last part taken ends about when the others do when parts hold the same work, not the same
    number of items."""
    n = int(bound.shape[0]) - 1
    k = max(1, min(n, parts))
    # part p starts at the first item whose first unit is at or after p / k of the total
    targets = (np.arange(k, dtype=np.int64) * int(bound[-1])) // k
    cuts = np.searchsorted(bound[:-1], targets, side="left")
    out: I64 = np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)
    return out


@parallel_kernel
def _scatter(bounds, n_local, tag, first_piece, piece_row, piece_next, piece_at, out_rows):  # type: ignore[no-untyped-def]  # pragma: no cover
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for p in in_turn(taken, bounds.shape[0] - 1):
            _scatter_part(
                bounds[p], bounds[p + 1], n_local[p], tag, first_piece, piece_row, piece_next, piece_at,
                out_rows,
            )  # fmt: skip


@kernel
def _scatter_part(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    lo, hi, n_conv, tag, first_piece, piece_row, piece_next, piece_at, out_rows
):
    """Rows ``lo:hi`` to their places (local conversation c's first piece at ``lo + c``)."""
    # per local conversation: next free position in the layout of each of its directions, row
    # where its next piece starts; first_piece[lo + c] becomes its current piece
    at = np.empty((n_conv, 2), np.int64)
    until = np.empty(n_conv, np.int64)
    for c in range(n_conv):
        q = first_piece[lo + c]
        at[c, 0] = piece_at[q, 0]
        at[c, 1] = piece_at[q, 1]
        until[c] = piece_row[piece_next[q]] if piece_next[q] >= 0 else hi
    # the current conversation's state in registers (see conversations._run)
    cur = -1
    i0 = np.int64(0)
    i1 = np.int64(0)
    u = np.int64(0)
    for b in range(lo, hi, BLOCK):
        e = min(b + BLOCK, hi)
        if e - b == BLOCK and cur >= 0 and e <= u:
            # a block inside the current piece (bulk transfers: nearly all of them) whose rows
            # all belong to the current conversation goes without the per-row tests, after one
            # vectorised check (bulk_5M: 7.5 → 4.2 ms; short flows unchanged)
            bad = np.int64(0)
            for i in range(np.uint64(b), np.uint64(e)):
                bad |= np.int64(tag[i] >> 1) ^ cur  # (-1, not TCP: never cur)
            if bad == 0:
                for i in range(np.uint64(b), np.uint64(e)):
                    d = np.int64(tag[i] & 1)
                    out_rows[np.uint64(i1 if d else i0)] = i
                    i0 += 1 - d
                    i1 += d
                continue
        for r in range(b, e):
            t = tag[np.uint64(r)]  # unsigned indices: no negative-index wraparound
            if t < 0:
                continue
            c = t >> 1
            if c != cur:
                if cur >= 0:
                    at[cur, 0], at[cur, 1], until[cur] = i0, i1, u
                cur = c
                i0, i1, u = at[c, 0], at[c, 1], until[c]
            if r >= u:  # the port pair was reused: the next flow of the conversation
                q = piece_next[first_piece[lo + c]]
                first_piece[lo + c] = q
                i0 = piece_at[q, 0]
                i1 = piece_at[q, 1]
                u = piece_row[piece_next[q]] if piece_next[q] >= 0 else hi
            # branch-free: directions alternate unpredictably
            d = np.int64(t & 1)
            out_rows[np.uint64(i1 if d else i0)] = r
            i0 += 1 - d
            i1 += d
