"""Lay the TCP packets out flow by flow, and cut the flows into chunks for parallel passes.

Every later pass walks one flow at a time (its two directions interleaved in capture order,
as Wireshark's state machine needs them), so the packets are grouped by flow, capture order
within each flow. :mod:`tcplens.tcp.flows` knows how many packets each flow has in each part
of the capture, hence where each part's packets of a flow start in the flow-major layout
(its "pieces"): the layout is written in one parallel pass over the parts, each packet put at
its piece's cursor — a counting sort without a counting pass. The flow's slice in that layout
is also its slice in :class:`~tcplens.tcp.model.Segments` (sorted by
``(flow, direction, frame)``), because both hold exactly the flow's packets.

Flows are independent once grouped, so the passes run them in parallel (numba ``prange``) over
chunks of whole flows holding about the same number of packets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.tcp.compiled import empty, kernel, parallel_kernel

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

# chunks per thread. numba's workqueue layer gives each thread one fixed block of consecutive
# prange iterations, with no work stealing (checked: a slow first iteration does not move any
# other to the second thread), so the threads are balanced by each chunk holding about the same
# number of packets, not by the number of chunks; a thread slowed down by other work on the
# machine keeps its whole block
CHUNKS_PER_THREAD = 8


@dataclass(frozen=True)
class FlowLayout:
    """The TCP packets grouped by flow, capture order within each flow."""

    rows: I32  # PacketTable row of each packet, flow-major
    direction: U8  # its direction (0 client → server)
    offsets: I64  # (2 n_flows + 1): Segments rows of direction d of flow f: [2f + d, 2f + d + 1]
    sack_offsets: I64  # (2 n_flows + 1): the same for the SACK blocks of the ACKs (Segments)
    chunks: I64  # flow boundaries of the parallel chunks (ascending, first 0, last n_flows)

    @property
    def n_flows(self) -> int:
        return (int(self.offsets.shape[0]) - 1) // 2


def scatter_by_flow(
    bounds: I64,
    n_local: I64,
    tag: I32,
    first_piece: I32,
    pieces: tuple[I64, I64, I64, U8],
    offsets: I64,
    sack_offsets: I64,
    rows_out: I32,
) -> FlowLayout:
    """The flow-major layout of the packets :mod:`tcplens.tcp.flows` tagged (see its step 3).

    ``bounds`` are the capture parts' row ranges, ``n_local`` their numbers of local
    conversations, ``tag`` each row's local conversation and direction, ``first_piece`` each
    local conversation's first piece (at ``bounds[part] + conversation``), ``pieces`` per piece its
    first row, the next piece of the same local conversation, its first position in the layout
    and its direction flip. The rows are written to ``rows_out`` (at least one value per TCP
    packet; the caller's work memory, not a fresh array: fresh pages are the main per-packet
    cost, issue 4).
    """
    n = int(offsets[-1])
    rows = rows_out[:n]
    direction = empty(n, np.uint8)
    piece_row, piece_next, piece_at, piece_flip = pieces
    _scatter(
        bounds, n_local, tag, first_piece, piece_row, piece_next, piece_at, piece_flip, rows,
        direction,
    )  # fmt: skip
    return FlowLayout(rows, direction, offsets, sack_offsets, flow_chunks(offsets))


def flow_chunks(offsets: I64) -> I64:
    """Flow boundaries of chunks of whole flows holding about the same number of packets."""
    return equal_work_parts(offsets[0::2], CHUNKS_PER_THREAD * numba.get_num_threads())


def equal_work_parts(bound: I64, parts: int) -> I64:
    """Boundaries of at most ``parts`` runs of consecutive items holding about the same work,
    none empty: ``bound`` is each item's first unit of work, then the total (CSR offsets, e.g.
    each flow's first packet). numba gives each thread a fixed block of a prange's iterations,
    so parallel passes balance their threads by the work in each part, not by item counts."""
    n = int(bound.shape[0]) - 1
    k = max(1, min(n, parts))
    # part p starts at the first item whose first unit is at or after p / k of the total
    targets = (np.arange(k, dtype=np.int64) * int(bound[-1])) // k
    cuts = np.searchsorted(bound[:-1], targets, side="left")
    out: I64 = np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)
    return out


@parallel_kernel
def _scatter(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    bounds, n_local, tag, first_piece, piece_row, piece_next, piece_at, piece_flip, out_rows,
    out_dir,
):  # fmt: skip
    for p in numba.prange(bounds.shape[0] - 1):
        _scatter_part(
            bounds[p], bounds[p + 1], n_local[p], tag, first_piece, piece_row, piece_next, piece_at,
            piece_flip, out_rows, out_dir,
        )  # fmt: skip


@kernel
def _scatter_part(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    lo, hi, n_conv, tag, first_piece, piece_row, piece_next, piece_at, piece_flip, out_rows,
    out_dir,
):  # fmt: skip
    """Rows ``lo:hi`` to their places (local conversation c's first piece at ``lo + c``)."""
    # per local conversation: next free position in the layout, row where its next piece
    # starts, direction flip; first_piece[lo + c] becomes its current piece
    at = np.empty(n_conv, np.int64)
    until = np.empty(n_conv, np.int64)
    flip = np.empty(n_conv, np.uint8)
    for c in range(n_conv):
        q = first_piece[lo + c]
        at[c] = piece_at[q]
        flip[c] = piece_flip[q]
        until[c] = piece_row[piece_next[q]] if piece_next[q] >= 0 else hi
    # the current conversation's state in registers (see flows._part)
    cur = -1
    i = 0
    u = 0
    fl = 0
    for r in range(lo, hi):
        t = tag[np.uint64(r)]  # unsigned indices: no negative-index wraparound
        if t < 0:
            continue
        c = t >> 1
        if c != cur:
            if cur >= 0:
                at[cur], until[cur], flip[cur] = i, u, fl
            cur = c
            i, u, fl = at[c], until[c], flip[c]
        if r >= u:  # the port pair was reused: the next flow of the conversation
            q = piece_next[first_piece[lo + c]]
            first_piece[lo + c] = q
            i = piece_at[q]
            fl = piece_flip[q]
            u = piece_row[piece_next[q]] if piece_next[q] >= 0 else hi
        at_u = np.uint64(i)
        out_rows[at_u] = r
        out_dir[at_u] = (t & 1) ^ fl
        i += 1
