"""Group operations on sorted index arrays, shared by the vectorised replays' steps."""

from __future__ import annotations

import numpy as np

__all__ = ["group_rank", "expand_ranges"]


def group_rank(keys: np.ndarray) -> np.ndarray:
    """Rank of each element within its run of equal ``keys`` (keys already grouped).

    >>> group_rank(np.array([3, 3, 5, 7, 7, 7])).tolist()
    [0, 1, 0, 0, 1, 2]
    """
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.r_[True, keys[1:] != keys[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    return np.arange(n) - first


def expand_ranges(starts, counts) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, index)`` of every element of the ranges ``[starts[i], starts[i] + counts[i])``.

    >>> [a.tolist() for a in expand_ranges([10, 0, 5], [2, 0, 1])]
    [[0, 0, 2], [10, 11, 5]]
    """
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.asarray(starts, dtype=np.int64)[owner] + offsets
