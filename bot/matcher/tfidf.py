"""TF-IDF vectors and sparse products in plain numpy: what the ranking model needs at answer time.

Training fits scikit-learn's ``TfidfVectorizer``'s numbers (:mod:`tracebot.matcher.training` computes them
without importing it); its vocabulary and
idf weights are exported into a :class:`Vocab`, which turns a text into the same L2-normalised vector
(character 2–4-grams inside word boundaries, or words and word pairs, lower-cased, sublinear tf) without
importing scikit-learn or scipy: importing them costs about a second, more than a whole cold start may
take. ``tests/matcher/test_model.py`` holds the two to the same numbers.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from tracebot.matcher import char_codes, codes
from tracebot.matcher.char_codes import CHAR_NGRAMS
from tracebot.matcher.glossary import Glossary
from tracebot.matcher.spans import ranges

# Words and word pairs: a word starts with a letter and may carry dots (torch.cuda.OutOfMemoryError);
# two kana/kanji in a row count as a word, since Japanese has no spaces.
WORD_PATTERN = r"(?u)[^\W\d_][\w.]*\w|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2}"
WORD_NGRAMS = (1, 2)
_WORD = re.compile(WORD_PATTERN)


def char_grams(text: str) -> list[str]:
    """scikit-learn's ``char_wb`` analyzer: n-grams of each whitespace-separated word padded with spaces."""
    out: list[str] = []
    for w in text.lower().split():
        out += word_char_grams(w)
    return out


@lru_cache(maxsize=1 << 16)
def word_char_grams(word: str) -> tuple[str, ...]:
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
    the glossary's concepts the text mentions (:meth:`tracebot.matcher.glossary.Glossary.concepts`): the
    text's words, then its runs of two words, ... (:func:`word_terms`), then its concepts."""
    tokens, concepts = word_terms(text)
    out = list(tokens)
    for n in range(WORD_NGRAMS[0] + 1, WORD_NGRAMS[1] + 1):
        out += [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return out + concepts


def word_terms(text: str) -> tuple[list[str], list[str]]:
    """``text``'s words (:data:`WORD_PATTERN`, lower-cased, in order) and its extra terms: the glossary's concepts
    it mentions, and the names its numbered errors stand for (:func:`tracebot.matcher.codes.names`: ``exit code
    -9`` adds ``sigkill``) with their concepts."""
    lowered = text.lower()
    tokens = _WORD.findall(lowered)
    named = codes.names(lowered)
    concepts = glossary().concepts(lowered, tokens)
    if named:
        concepts += [*named, *glossary().concepts("", named)]
    return tokens, concepts


@cache
def glossary() -> Glossary:
    """The glossary, its English terms split into words as :func:`word_grams` splits a text."""
    return Glossary.load(_WORD.findall)


ANALYZERS = {"char": char_grams, "word": word_grams}
MAX_CACHED_WORDS = 200_000  # words whose feature numbers a Vocab keeps (a long-running bot sees many)
# Features whose summed vectors have a value for at least this share of the entries are stored dense
# (Columns.with_dense_rows): at most twice the bytes of their sparse form (the char sums at 1,000 entries:
# 30 MB, was 28 MB), and a 2 KB paste's char centroids 6x faster (2.3 ms -> 0.36 ms; at 1/2: 0.51 ms).
DENSE_SHARE = 1 / 3


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
    # The word space's two-word terms, not in ``index`` (training.WordCounts.vocab): each as its words'
    # numbers (the first's in the top 32 bits), ascending, and the terms' own numbers. At 1,000 entries that
    # do not repeat each other's texts, 272,713 of its 336,094 terms; a dict of them all was 0.14-0.2 s of
    # every warm start to unpickle, these arrays are mapped. None: every term is in ``index``.
    pairs: np.ndarray | None = None
    pair_ids: np.ndarray | None = None
    # The character space's n-grams as numbers (char_codes; ascending: in the order of their features) and
    # the alphabet they are numbered in, with ``index`` empty: at 1,000 distinct entries a dict of 100,000
    # n-grams was ~0.03-0.04 s of every warm start to unpickle. None: the n-grams are in ``index``.
    alphabet: char_codes.Alphabet | None = None
    codes: np.ndarray | None = None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_word_ids", None)  # a cache of what words were seen since loading
        return state

    def vector(self, text: str) -> Vector:
        if self.analyzer == "char":
            idx, tf = self._char_counts(text)
        else:
            idx, tf = np.unique(np.array(self._term_ids(text), dtype=np.int64), return_counts=True)
        if not len(idx):
            return Vector(np.zeros(0, dtype=np.int64), np.zeros(0))
        val = (np.log(tf) + 1.0) * self.idf[idx]
        return Vector(idx, val / np.sqrt(val @ val))

    def _term_ids(self, text: str) -> list[int]:
        """The numbers of ``text``'s terms (:func:`word_grams`) in the vocabulary, in any order."""
        index = self.index
        if self.pairs is None:
            return [i for i in map(index.get, word_grams(text)) if i is not None]
        tokens, concepts = word_terms(text)
        words = list(map(index.get, tokens))
        ids = [i for i in words if i is not None]
        ids += [i for i in map(index.get, concepts) if i is not None]
        both = [a << 32 | b for a, b in zip(words, words[1:], strict=False) if a is not None and b is not None]
        if both and len(self.pairs):
            codes = np.array(both, dtype=np.int64)
            at = np.minimum(np.searchsorted(self.pairs, codes), len(self.pairs) - 1)
            ids += self.pair_ids[at[self.pairs[at] == codes]].tolist()
        return ids

    def _char_counts(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The features of ``text``'s character n-grams (ascending) and how often each occurs. A pasted
        log repeats its words (every rank prints the same line): each distinct word once, and each word's
        feature numbers are kept for the next text."""
        cache: dict[str, np.ndarray] | None = self.__dict__.get("_word_ids")
        if cache is None or len(cache) > MAX_CACHED_WORDS:
            cache = self.__dict__["_word_ids"] = {}
        counted = Counter(text.lower().split())
        missing = [w for w in counted if w not in cache]
        if missing:
            cache.update(zip(missing, self._char_ids(missing), strict=True))
        arrays, times = [cache[w] for w in counted], list(counted.values())
        if not arrays:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        # counted over the text's own features, not over a vocabulary-long array (44,000 character n-grams
        # at the bench's 1,000 entries, more in a real knowledge base; allocating and scanning it, a 2 KB
        # paste's counting took 80-110 us, now 18 us); whole counts, so the same sums
        idx, at = np.unique(np.concatenate(arrays), return_inverse=True)
        return idx, np.bincount(at, weights=np.repeat(times, [len(a) for a in arrays]), minlength=len(idx))

    def _char_ids(self, words: list[str]) -> list[np.ndarray]:
        """Each word's character n-grams' feature numbers (those in the vocabulary): all the words at once
        when the n-grams are numbers, else looked up in ``index`` one by one."""
        if self.codes is None or self.alphabet is None:
            index = self.index
            return [np.array([i for i in map(index.get, word_char_grams(w)) if i is not None], dtype=np.int64) for w in words]
        rows, ids = char_codes.found(words, self.alphabet, self.codes)
        order = np.argsort(rows, kind="stable")
        return np.split(ids[order], np.cumsum(np.bincount(rows, minlength=len(words)))[:-1])


# Scratch arrays for the products' large temporaries, kept per thread: on this 2-core machine fresh
# memory for each temporary (page faults, zeroing) cost more than the arithmetic (a 2 KB paste's product
# with 1,000 entries' sums: 6 ms with fresh arrays, 2 ms with kept ones).
_scratch = threading.local()
MAX_SCRATCH = 1 << 24  # items; a larger temporary is allocated for the call only


def scratch(name: str, n: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised array of ``n`` items for this thread, reused by the next call with ``name``."""
    key = f"{name}:{np.dtype(dtype).str}"
    kept = _scratch.__dict__.get(key)
    if kept is None or len(kept) < n:
        if n > MAX_SCRATCH:
            return np.empty(n, dtype=dtype)
        kept = _scratch.__dict__[key] = np.empty(max(n, 1 << 16), dtype=dtype)
    return kept[:n]


@dataclass
class Columns:
    """A sparse matrix in CSR arrays (``n`` columns); :meth:`dot` multiplies a vector with it from the
    left (rows are features), :meth:`run_dots` takes runs of rows' dot products with a dense vector.

    Rows with a value in most columns may be kept dense instead (:meth:`with_dense_rows`; their sparse
    rows are then empty): a character n-gram such as ``" t"`` is in nearly every entry's sum, and a
    paste's few hundred such n-grams were most of the values :meth:`dot` gathered one by one."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n: int
    dense_at: np.ndarray | None = None  # per row, its row in ``dense`` (-1: kept sparse)
    dense: np.ndarray | None = None  # the dense rows (rows × n)

    def with_dense_rows(self, min_share: float = DENSE_SHARE) -> Columns:
        """These columns with every row that has values in at least ``min_share`` of the columns kept
        dense (a dense row takes at most ``8 / (12 * min_share)`` times the bytes of its sparse form)."""
        lens = np.diff(self.indptr)
        rows = np.flatnonzero(lens >= max(1.0, min_share * self.n))
        if not len(rows):
            return self
        # float64 even when the values are stored as float32: einsum with a float32 block and a float64
        # vector casts the whole block on every call (a 2 KB paste's diagnosis 6.6 -> 8.6 ms at 1,000 entries)
        dense = np.zeros((len(rows), self.n))
        pos, row_lens = self._positions(rows)
        dense[np.repeat(np.arange(len(rows)), row_lens), self.indices[pos]] = self.data[pos]
        at = np.full(len(lens), -1, dtype=np.int64)
        at[rows] = np.arange(len(rows))
        keep = np.ones(len(self.data), dtype=bool)
        keep[pos] = False
        indptr = np.concatenate([[0], np.cumsum(np.where(at >= 0, 0, lens))]).astype(self.indptr.dtype)
        return Columns(indptr, self.indices[keep], self.data[keep], self.n, at, dense)

    def _positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the stored values of ``rows`` are (in a scratch array), and how many each row has."""
        starts = self.indptr[rows]
        lens = self.indptr[rows + 1] - starts
        return ranges(starts, lens, out=scratch("pos", int(lens.sum()), np.int64)), lens

    def _gathered(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The column numbers and values at ``pos`` (scratch arrays)."""
        cols = np.take(self.indices, pos, out=scratch("cols", len(pos), self.indices.dtype))
        return cols, np.take(self.data, pos, out=scratch("values", len(pos), self.data.dtype))

    @staticmethod
    def _times(values: np.ndarray, factors: np.ndarray) -> np.ndarray:
        """``values * factors`` in float64 (a scratch array): the values may be stored as float32."""
        return np.multiply(values, factors, out=scratch("products", len(values), np.float64))

    def dot(self, v: Vector) -> np.ndarray:
        pos, lens = self._positions(v.idx)
        cols, values = self._gathered(pos)
        out = np.bincount(cols, weights=self._times(values, np.repeat(v.val, lens)), minlength=self.n)
        if self.dense is not None and len(v.idx):
            at = self.dense_at[v.idx]
            kept = at >= 0
            if kept.any():
                # not +=: bincount of no values is an integer array
                out = out + np.einsum("i,ij->j", v.val[kept], self.dense[at[kept]])
        return out

    def dot_at(self, v: Vector, cols: np.ndarray) -> np.ndarray:
        """``self.dot(v)[cols]``, the same floats, with the dense rows' products summed for ``cols`` only: in
        the order :meth:`dot`'s ``einsum`` adds them (one row after the other, which ``add.accumulate`` keeps;
        an ``einsum`` over fewer columns adds in another order)."""
        pos, lens = self._positions(v.idx)
        found, values = self._gathered(pos)
        out = np.bincount(found, weights=self._times(values, np.repeat(v.val, lens)), minlength=self.n)[cols]
        if self.dense is not None and len(v.idx) and len(cols):
            at = self.dense_at[v.idx]
            kept = at >= 0
            if kept.any():
                products = v.val[kept][:, None] * self.dense[np.ix_(at[kept], cols)]
                out = out + np.add.accumulate(products, axis=0)[-1]
        return out

    def run_dots(self, first: np.ndarray, count: np.ndarray, dense: np.ndarray) -> np.ndarray:
        """The dot products with ``dense`` of rows ``first[k]`` to ``first[k] + count[k] - 1``, run after
        run (an entry's parts are such a run). A run's stored values are consecutive: they are copied as
        slices, not gathered through an index array of every value (training compares ~270 texts with
        ~200 parts each, 16 million values at 1,000 entries: 0.145 -> ~0.10 s)."""
        assert self.dense is None, "run_dots reads the sparse rows only"  # noqa: S101
        ip = self.indptr
        rows = ranges(first, count)
        lens = ip[rows + 1] - ip[rows]
        n = int(lens.sum())
        if not n:
            return np.zeros(len(rows))
        spans = list(zip(ip[first].tolist(), ip[first + count].tolist(), strict=True))
        cols = np.concatenate([self.indices[a:b] for a, b in spans], out=scratch("cols", n, self.indices.dtype))
        values = np.concatenate([self.data[a:b] for a, b in spans], out=scratch("values", n, self.data.dtype))
        products = self._times(values, np.take(dense, cols, out=scratch("dense", n, dense.dtype)))
        # each row's products are consecutive: summed in place (reduceat), not scattered by row number; over
        # the rows that have values only (an empty row's start would end the row before it one value short)
        out = np.zeros(len(rows))
        filled = np.flatnonzero(lens)
        out[filled] = np.add.reduceat(products, (np.cumsum(lens) - lens)[filled])
        return out


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

    def centroid_at(self, v: Vector, entries: np.ndarray) -> np.ndarray:
        """:meth:`centroid` of ``entries`` only (the same floats): what the others would cost is the products
        of every entry's sums with ``v``'s common n-grams."""
        return self.sums.dot_at(v, entries) / np.sqrt(np.maximum(self.sq_norms[entries], 1e-12))

    def nearest(self, v: Vector, entries: list[int]) -> np.ndarray:
        """Cosine of ``v`` with the closest single part of each of ``entries`` (0 for the others): the
        work grows with the candidates, not with the knowledge base."""
        out = np.zeros(len(self.starts) - 1)
        if not entries or not len(v.idx):
            return out
        e = np.asarray(entries, dtype=np.int64)
        first, count = self.starts[e], self.starts[e + 1] - self.starts[e]
        out[e] = np.maximum.reduceat(self.parts.run_dots(first, count, dense_row(v.idx, v.val, self.parts.n)), np.cumsum(count) - count)
        return out


def dense_row(idx: np.ndarray, val: np.ndarray, n: int) -> np.ndarray:
    """A sparse row (a :class:`Vector`'s, or a CSR matrix's row) as a dense array of ``n`` columns."""
    dense = np.zeros(n)
    dense[idx] = val
    return dense
