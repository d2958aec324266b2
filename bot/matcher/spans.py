"""Runs of consecutive numbers as one array, without a Python loop: where a sparse matrix's rows are, or a
word's n-grams in a string of words."""

from __future__ import annotations

import numpy as np

_COUNTING = np.arange(0)


def _counting(n: int) -> np.ndarray:
    """``np.arange(n)``, read-only, from one shared array that grows as needed."""
    global _COUNTING
    if len(_COUNTING) < n:
        grown = np.arange(max(n, 2 * len(_COUNTING), 1 << 16))
        grown.flags.writeable = False
        _COUNTING = grown
    return _COUNTING[:n]


def ranges(starts: np.ndarray, lens: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])`` without a Python loop (into
    ``out`` when given: an int64 array of ``lens.sum()`` items)."""
    return np.add(np.repeat(starts - (np.cumsum(lens) - lens), lens), _counting(int(lens.sum())), out=out)
