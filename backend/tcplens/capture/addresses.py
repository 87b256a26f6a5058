"""IP addresses as small ids: each distinct address once in a table, each packet its two ids.

Two 16-byte address columns were a third of the packet table's bytes (32 of 98 per packet),
while a capture holds few distinct addresses. An address is a key of two 64-bit words (its 16
bytes in memory order; IPv4 as IPv4-mapped IPv6, ::ffff:a.b.c.d), ids are dense and given in
order of first appearance (source before destination within a packet), id 0 is :: (no address).

The decoder runs on all cores and only reads the table: an address it does not find is a miss,
noted per part of the rows; between chunks, ``resolve_misses`` adds the misses in row order, so
ids do not depend on how rows were split between cores.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import inline_kernel, kernel
from tcplens.capture.table import I64, U8, U32

U64 = npt.NDArray[np.uint64]

EMPTY = -1  # a free slot of the hash table
FIRST_SLOTS = 1 << 10  # slots of a new table (a power of two, at most half of them used)


@inline_kernel
def slot_of(hi: np.uint64, lo: np.uint64, mask: int) -> int:
    """Where a key's probe starts (multiplicative hashing, Knuth; golden-ratio constants)."""
    h = hi * np.uint64(0x9E3779B97F4A7C15) ^ lo * np.uint64(0xC2B2AE3D27D4EB4F)
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))  # type: ignore[return-value]


@inline_kernel
def find_address(slots: I64, keys: U64, hi: np.uint64, lo: np.uint64) -> int:
    """The id of the key, or -1 if it is not in the table."""
    mask = slots.shape[0] - 1
    s = slot_of(hi, lo, mask)
    while True:
        k = slots[s]
        if k == EMPTY:
            return -1
        if keys[k, 0] == hi and keys[k, 1] == lo:
            return int(k)
        s = (s + 1) & mask


@inline_kernel
def _insert(slots: I64, keys: U64, k: int) -> None:
    mask = slots.shape[0] - 1
    s = slot_of(keys[k, 0], keys[k, 1], mask)
    while slots[s] != EMPTY:
        s = (s + 1) & mask
    slots[s] = k


@kernel
def _rehash(slots: I64, keys: U64, count: int) -> None:
    for k in range(count):
        _insert(slots, keys, k)


@kernel
def resolve_misses(
    slots: I64, keys: U64, count: int,
    miss_count: I64, miss_row: I64, miss_key: U64, src_id: U32, dst_id: U32,
) -> int:  # fmt: skip
    """Give every missed address its id, in row order; returns the new number of addresses.

    ``miss_row`` holds ``2 * row + (0 source, 1 destination)`` per miss, by part; the table has
    room for every miss (``AddressBook.reserve``).
    """
    for p in range(miss_count.shape[0]):
        for m in range(miss_count[p]):
            hi = miss_key[p, m, 0]
            lo = miss_key[p, m, 1]
            k = find_address(slots, keys, hi, lo)
            if k < 0:
                k = count
                keys[k, 0] = hi
                keys[k, 1] = lo
                _insert(slots, keys, k)
                count += 1
            row = miss_row[p, m]
            if row & 1:
                dst_id[row >> 1] = k
            else:
                src_id[row >> 1] = k
    return count


class AddressBook:
    """The distinct addresses of one read, growing as packets bring new ones."""

    def __init__(self) -> None:
        self.slots: I64 = np.full(FIRST_SLOTS, EMPTY, np.int64)
        self.keys: U64 = np.zeros((FIRST_SLOTS // 2, 2), np.uint64)
        self.count = 1  # id 0: :: (all zero), what rows without an IP header carry
        _rehash(self.slots, self.keys, 1)

    def reserve(self, more: int) -> None:
        """Make room for ``more`` new addresses (at most half of the slots stay in use)."""
        needed = self.count + more
        if needed <= self.keys.shape[0]:
            return
        size = self.slots.shape[0]
        while size // 2 < needed:
            size *= 2
        keys = np.zeros((size // 2, 2), np.uint64)
        keys[: self.count] = self.keys[: self.count]
        self.keys = keys
        self.slots = np.full(size, EMPTY, np.int64)
        _rehash(self.slots, self.keys, self.count)

    def table(self) -> U8:
        """The (k, 16) address bytes, row ``id``."""
        words = np.ascontiguousarray(self.keys[: self.count])
        table: U8 = words.view(np.uint8).reshape(self.count, 16).copy()
        return table
