"""Character n-grams of many words at once, as 64-bit numbers: what fitting the character TF-IDF space
counts (:class:`tracebot.matcher.training.CharCounts`).

A word's n-grams are those of :func:`tracebot.matcher.tfidf.word_char_grams` (scikit-learn's ``char_wb``:
the word padded with a space on each side, every 2-, 3- and 4-character slice). Each character is
numbered by its rank in an :class:`Alphabet` (the sorted characters of the words fitted on, from 1), in
as few bits as those numbers need, and an n-gram is its characters' numbers side by side from the top
down, the missing ones 0. So two n-grams' numbers compare as the strings do (a prefix first), sorting
the numbers sorts the n-grams, and one sort of every n-gram of every distinct word numbers the vocabulary
as scikit-learn numbers it (its sorted terms). At 1,000 entries that do not repeat each other's texts
that is 4.3 million n-grams of 101,572 distinct words, which a Python loop numbering them one at a time
took ~5 s of CPU to number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracebot.matcher.spans import ranges

CHAR_NGRAMS = (2, 4)  # the character TF-IDF space's n-gram sizes (tfidf.word_char_grams)
LONGEST = CHAR_NGRAMS[1]
MAX_BITS = 64 // LONGEST  # bits of a character's number: a whole n-gram fits 64 bits
TABLE_FROM = 1 << 16  # code points numbered through a table from this many at once


@dataclass
class Alphabet:
    """The characters fitted on (code points, ascending; numbered 1, 2, ... in this order) and the bits
    a number takes (room for one more number, :attr:`outside`, for a character not in it)."""

    letters: np.ndarray
    bits: int

    @classmethod
    def of(cls, points: np.ndarray) -> Alphabet | None:
        """The alphabet of ``points``, or ``None`` when its numbers would not fit :data:`MAX_BITS`."""
        present = np.zeros(int(points.max()) + 1 if len(points) else 0, dtype=bool)
        present[points] = True
        letters = np.flatnonzero(present).astype(np.uint32)
        bits = (len(letters) + 1).bit_length()
        return cls(letters, bits) if bits <= MAX_BITS else None

    @property
    def outside(self) -> int:
        return (1 << self.bits) - 1

    def numbers(self, points: np.ndarray) -> np.ndarray:
        """Each code point's number (:attr:`outside` for one not in the alphabet)."""
        letters = self.letters
        if len(points) > TABLE_FROM:  # a table as long as the largest code point, read at each
            table = np.full(max(int(points.max()), int(letters[-1]) if len(letters) else 0) + 1, self.outside, dtype=np.uint64)
            table[letters] = np.arange(1, len(letters) + 1, dtype=np.uint64)
            return table[points]
        # a few (a paste's new words): searched for (the table of an alphabet with an emoji is 1 MB to fill)
        at = np.minimum(np.searchsorted(letters, points), max(len(letters) - 1, 0))
        known = letters[at] == points if len(letters) else np.zeros(len(points), dtype=bool)
        return np.where(known, at.astype(np.uint64) + np.uint64(1), np.uint64(self.outside))


@dataclass
class WordGrams:
    """Every n-gram of a list of words: its word (``rows``), its number (``codes``), and where it is:
    in ``padded`` (the words, each between spaces, one after the other) from ``starts[k]`` for n-grams
    ``bounds[k]`` to ``bounds[k + 1]`` of these arrays, which are ``k`` + 2 characters long."""

    padded: str
    rows: np.ndarray
    codes: np.ndarray
    starts: list[np.ndarray]
    bounds: np.ndarray

    def terms(self, at: np.ndarray) -> list[str]:
        """The n-grams at positions ``at`` of these arrays, as strings."""
        size = np.searchsorted(self.bounds, at, side="right") - 1
        start = np.concatenate(self.starts)[at]
        s, lo = self.padded, CHAR_NGRAMS[0]
        return [s[a : a + lo + k] for a, k in zip(start.tolist(), size.tolist(), strict=True)]


def code_points(words: list[str]) -> tuple[str, np.ndarray, np.ndarray]:
    """The words each between spaces, one after the other; its characters' code points; each word's
    length with its spaces."""
    padded = "".join([f" {w} " for w in words])
    # a lone surrogate (a file's undecodable byte) is a character like any other, as in the string
    points = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return padded, points, np.fromiter(map(len, words), dtype=np.int64, count=len(words)) + 2


def word_grams(padded: str, numbers: np.ndarray, lengths: np.ndarray, bits: int) -> WordGrams:
    """Every n-gram of each word (``lengths``: each padded word's length in ``padded``; ``numbers``: each
    character's number, in ``bits`` bits)."""
    lo, hi = CHAR_NGRAMS
    # the longest n-gram's number at every position of ``padded`` (past a word's end it reads the next
    # word's spaces and letters, or zeros); a shorter n-gram's is its top bits: taken at each n-gram's start,
    # not assembled character by character there (4.3 million n-grams from 1.2 million positions)
    numbers = np.concatenate([numbers, np.zeros(hi - 1, dtype=np.uint64)])
    size = len(numbers) - hi + 1
    longest = np.zeros(size, dtype=np.uint64)
    for j in range(hi):
        longest |= numbers[j : j + size] << np.uint64(bits * (hi - 1 - j))
    offsets = np.cumsum(lengths) - lengths
    which = np.arange(len(lengths))
    rows, codes, starts = [], [], []
    for n in range(lo, hi + 1):
        count = np.maximum(lengths - n + 1, 0)
        at = ranges(offsets, count)
        code = longest[at]
        code &= np.uint64(((1 << (bits * n)) - 1) << (bits * (hi - n)))
        rows.append(np.repeat(which, count))
        codes.append(code)
        starts.append(at)
    bounds = np.cumsum([0, *(len(a) for a in starts)])
    return WordGrams(padded, np.concatenate(rows), np.concatenate(codes), starts, bounds)


def numbered(codes: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` (each code's number among the distinct ones, ascending),
    and for each distinct code one position where it occurs. When the codes (``LONGEST * bits`` bits)
    leave room for a position, each is sorted with its position in its low bits (a plain sort, ~10x faster
    than the argsort ``np.unique`` takes at 4.3 million codes)."""
    shift = max(len(codes) - 1, 0).bit_length()
    if LONGEST * bits + shift > 64:
        distinct, inverse = np.unique(codes, return_inverse=True)
        where = np.empty(len(distinct), dtype=np.int64)
        where[inverse] = np.arange(len(codes))  # any position of each will do
        return distinct, inverse, where
    low = np.uint64((1 << shift) - 1)
    keyed = np.sort((codes << np.uint64(shift)) | np.arange(len(codes), dtype=np.uint64))
    sorted_codes = keyed >> np.uint64(shift)
    first = np.ones(len(keyed), dtype=bool)
    np.not_equal(sorted_codes[1:], sorted_codes[:-1], out=first[1:])
    inverse = np.empty(len(codes), dtype=np.int64)
    positions = (keyed & low).astype(np.int64)
    inverse[positions] = np.cumsum(first) - 1
    return sorted_codes[first], inverse, positions[first]


def found(words: list[str], alphabet: Alphabet, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each of the words' n-grams that is one of ``codes`` (a fitted vocabulary's, ascending, numbered in
    ``alphabet``): its word's position in ``words`` and its position in ``codes`` (its feature number)."""
    padded, points, lengths = code_points(words)
    grams = word_grams(padded, alphabet.numbers(points), lengths, alphabet.bits)
    # searched for in order (a paste's 1,227 n-grams in 100,000 codes: 260 us in the text's order, 95 sorted)
    order = np.argsort(grams.codes)
    wanted = grams.codes[order]
    at = np.minimum(np.searchsorted(codes, wanted), max(len(codes) - 1, 0))
    known = codes[at] == wanted if len(codes) else np.zeros(len(at), dtype=bool)
    return grams.rows[order[known]], at[known].astype(np.int64)
