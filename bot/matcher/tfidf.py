"""TF-IDF vectors and sparse products in plain numpy: what the ranking model needs at answer time.

Training fits scikit-learn's ``TfidfVectorizer`` (:mod:`tracebot.matcher.training`); its vocabulary and
idf weights are exported into a :class:`Vocab`, which turns a text into the same L2-normalised vector
(character 2–4-grams inside word boundaries, or words and word pairs, lower-cased, sublinear tf) without
importing scikit-learn or scipy: importing them costs about a second, more than a whole cold start may
take. ``tests/matcher/test_model.py`` holds the two to the same numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from tracebot.matcher.glossary import Glossary

# Words and word pairs: a word starts with a letter and may carry dots (torch.cuda.OutOfMemoryError);
# two kana/kanji in a row count as a word, since Japanese has no spaces.
WORD_PATTERN = r"(?u)[^\W\d_][\w.]*\w|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2}"
CHAR_NGRAMS = (2, 4)
WORD_NGRAMS = (1, 2)
_WORD = re.compile(WORD_PATTERN)


def char_grams(text: str) -> list[str]:
    """scikit-learn's ``char_wb`` analyzer: n-grams of each whitespace-separated word padded with spaces."""
    out: list[str] = []
    for w in text.lower().split():
        out += _word_char_grams(w)
    return out


@lru_cache(maxsize=1 << 16)
def _word_char_grams(word: str) -> tuple[str, ...]:
    """One word's n-grams; cached, since the same words recur in every log and every entry."""
    lo, hi = CHAR_NGRAMS
    w = f" {word} "
    size = len(w)
    out: list[str] = []
    for n in range(lo, hi + 1):
        if size <= n:  # a short word counts once, whole
            out.append(w)
            break
        out += [w[offset : offset + n] for offset in range(size - n + 1)]
    return tuple(out)


def word_grams(text: str) -> list[str]:
    """scikit-learn's ``word`` analyzer with :data:`WORD_PATTERN` and n-grams :data:`WORD_NGRAMS`, then
    the glossary's concepts the text mentions (:meth:`tracebot.matcher.glossary.Glossary.concepts`)."""
    lowered = text.lower()
    tokens = _WORD.findall(lowered)
    out = list(tokens)
    for n in range(WORD_NGRAMS[0] + 1, WORD_NGRAMS[1] + 1):
        out += [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return out + glossary().concepts(lowered, tokens)


@cache
def glossary() -> Glossary:
    """The glossary, its English terms split into words as :func:`word_grams` splits a text."""
    return Glossary.load(_WORD.findall)


ANALYZERS = {"char": char_grams, "word": word_grams}


@dataclass
class Vector:
    """A sparse row: feature indices (ascending) and their weights."""

    idx: np.ndarray
    val: np.ndarray


@dataclass
class Vocab:
    analyzer: str  # a key of ANALYZERS
    index: dict[str, int]
    idf: np.ndarray

    def vector(self, text: str) -> Vector:
        index = self.index
        ids: list[int] = []
        if self.analyzer == "char":
            # A pasted log repeats its words (every rank prints the same line): n-grams once per distinct word.
            for word, times in Counter(text.lower().split()).items():
                ids += [i for i in map(index.get, _word_char_grams(word)) if i is not None] * times
        else:
            ids = [i for i in map(index.get, word_grams(text)) if i is not None]
        if not ids:
            return Vector(np.zeros(0, dtype=np.int64), np.zeros(0))
        idx, tf = np.unique(np.array(ids, dtype=np.int64), return_counts=True)
        val = (np.log(tf) + 1.0) * self.idf[idx]
        return Vector(idx, val / np.sqrt(val @ val))


def ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])`` without a Python loop."""
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))


@dataclass
class Columns:
    """A sparse matrix in CSR arrays (``n`` columns); :meth:`dot` multiplies a vector with it from the
    left (rows are features), :meth:`row_dots` takes chosen rows' dot products with a dense vector."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n: int

    def _positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the stored values of ``rows`` are, and how many each row has."""
        starts = self.indptr[rows]
        lens = self.indptr[rows + 1] - starts
        return ranges(starts, lens), lens

    def dot(self, v: Vector) -> np.ndarray:
        pos, lens = self._positions(v.idx)
        return np.bincount(self.indices[pos], weights=np.repeat(v.val, lens) * self.data[pos], minlength=self.n)

    def row_dots(self, rows: np.ndarray, dense: np.ndarray) -> np.ndarray:
        pos, lens = self._positions(rows)
        return np.bincount(
            np.repeat(np.arange(len(rows)), lens), weights=self.data[pos] * dense[self.indices[pos]], minlength=len(rows)
        )


@dataclass
class Space:
    """One TF-IDF space over the entries' texts: per entry the sum of its parts' vectors (``sums``, with
    their squared norms) and the parts themselves (``parts``, one row each, grouped by entry from
    ``starts``)."""

    vocab: Vocab
    sums: Columns  # features × entries
    sq_norms: np.ndarray
    parts: Columns  # parts × features
    starts: np.ndarray  # first part of each entry, and the number of parts at the end

    def centroid(self, v: Vector) -> np.ndarray:
        """Cosine of ``v`` with each entry's summed vector."""
        return self.sums.dot(v) / np.sqrt(np.maximum(self.sq_norms, 1e-12))

    def nearest(self, v: Vector, entries: list[int]) -> np.ndarray:
        """Cosine of ``v`` with the closest single part of each of ``entries`` (0 for the others): the
        work grows with the candidates, not with the knowledge base."""
        out = np.zeros(len(self.starts) - 1)
        if not entries or not len(v.idx):
            return out
        e = np.asarray(entries, dtype=np.int64)
        first, count = self.starts[e], self.starts[e + 1] - self.starts[e]
        rows = ranges(first, count)
        dense = np.zeros(self.parts.n)
        dense[v.idx] = v.val
        out[e] = np.maximum.reduceat(self.parts.row_dots(rows, dense), np.cumsum(count) - count)
        return out
