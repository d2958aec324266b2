"""Character n-gram vectors for prose, in any script.

Token-based fuzzy scorers fail on Chinese and Japanese (no spaces between words), so prose questions
are compared as bags of character n-grams: trigrams inside Latin words, bigrams over runs of CJK
characters, weighted by inverse document frequency over the knowledge base's phrases so that common
n-grams ("the", "ing", "する") carry little weight.
"""

from __future__ import annotations

import heapq
import math
import re
import sys
from array import array
from collections import Counter, deque
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate
from operator import mul

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[a-z][a-z0-9_]*(?:[-.][a-z0-9_]+)*")  # nvidia-smi, torch.distributed: one word
_NUM = re.compile(r"\d+")

Vector = dict[str, float]
FULL_COVER_WORDS = 5
MAX_CANDIDATES = 64  # documents scored exactly, chosen by their overlap on distinctive n-grams
NUMPY_FROM = 4000  # postings summed in Python up to this many entries, with NumPy above
FEW_COMMON = 8  # n-grams in common summed in a loop up to this many, by iterators above (the same floats)
NUMPY_LOADED_FROM = 500  # ... or above this many when NumPy is imported already (the model uses it)


def grams(text: str) -> Counter[str]:
    """N-grams of ``text``: ``#word`` unigrams and trigrams of Latin words, bigrams of CJK runs."""
    text = _NUM.sub(" ", text.lower())
    seq: list[str] = []
    for word in _WORD.findall(text):
        if len(word) >= 2:
            seq += _word_grams(word)
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            seq.append(run)
        seq += [run[i : i + 2] for i in range(len(run) - 1)]
    # counted in C, keys in order of first appearance (as a loop of += would leave them)
    return Counter(seq)


# The cache counts words, not bytes: a paste of long made-up words (up to 4,000 characters each reach
# the phrase matcher) would otherwise keep ~240 KB per word for the life of the bot. Real words are short.
MAX_CACHED_WORD = 32
CACHED_WORDS = 1 << 14  # at most ~30 MB; training 1,000 entries' phrases meets ~10,000 distinct words


def _word_grams(word: str) -> tuple[str, ...]:
    """A Latin word's ``#word`` unigram and trigrams; cached when short, since phrases and pastes repeat words."""
    return _short_word_grams(word) if len(word) <= MAX_CACHED_WORD else _grams_of(word)


def _grams_of(word: str) -> tuple[str, ...]:
    padded = f" {word} "
    return ("#" + word, *(padded[i : i + 3] for i in range(len(padded) - 2)))


_short_word_grams = lru_cache(maxsize=CACHED_WORDS)(_grams_of)


class NgramIndex:
    """IDF-weighted n-gram vectors of a set of short documents (phrases), with cosine / coverage.

    Kept compact for the matcher cache: postings as typed arrays, each document's vector rebuilt from
    its text on first use (the same floats), so loading a cached index costs little more than its idf
    table; NumPy is imported only when a query touches many postings."""

    def __init__(self, documents: list[str]):
        counts = [grams(d) for d in documents]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        n = max(1, len(documents))
        self.idf = {g: math.log((n + 1) / (k + 0.5)) for g, k in df.items()}
        self.default_idf = math.log(n + 1)
        self.documents = documents
        self._vectors: dict[int, Vector] = {}
        for i, c in enumerate(counts):
            self._vectors[i] = self._weigh(c)
        # How much a document says: distinct words (Latin) or CJK bigrams. Coverage of a two-word phrase
        # is cheap, so coverage counts in proportion to this.
        self.sizes = array("l", [sum(1 for g in c if g.startswith("#")) + sum(1 for g in c if len(g) == 2) for c in counts])
        self.norms = array("d", [_norm(self._vectors[i]) for i in range(len(documents))])
        lists: dict[str, tuple[list[int], list[float]]] = {}
        for i in range(len(documents)):
            for g, w in self._vectors[i].items():
                posting = lists.get(g)
                if posting is None:
                    posting = lists[g] = ([], [])
                posting[0].append(i)
                posting[1].append(w)
        # For each n-gram (numbered by ``grams``): the documents that have it and their weight of it, from
        # ``starts[k]``, ``lens[k]`` long, in typed arrays of every n-gram's postings end to end: compact to
        # store, and NumPy reads them without a copy (one array of each, not two per n-gram: a question chooses
        # hundreds of n-grams at 1,000 entries, and viewing each posting as an array was half of choosing).
        self.grams = {g: k for k, g in enumerate(lists)}
        self.lens = array("q", [len(ds) for ds, _ in lists.values()])
        self.starts = array("q", accumulate(self.lens, initial=0))[:-1]
        self.docs = array("q", [d for ds, _ in lists.values() for d in ds])
        self.weights = array("d", [w for _, ws in lists.values() for w in ws])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_vectors"] = {}  # rebuilt from the documents on first use
        state.pop("_flat", None)  # NumPy's views of the arrays
        return state

    def _weigh(self, c: Counter[str]) -> Vector:
        # (1 + log k) · idf; most n-grams of a phrase occur once, and 1 + log 1 is exactly 1: the same floats
        # without a logarithm for each (rebuilding the vectors a training's texts meet, after the index is
        # loaded from the cache, was half of gathering their evidence at 1,000 entries)
        idf, default = self.idf, self.default_idf
        return {g: idf.get(g, default) if k == 1 else (1 + math.log(k)) * idf.get(g, default) for g, k in c.items()}

    def _vector(self, i: int) -> Vector:
        vec = self._vectors.get(i)
        if vec is None:
            vec = self._vectors[i] = self._weigh(grams(self.documents[i]))
        return vec

    def vector(self, text: str) -> Vector:
        # Unknown n-grams get no weight: they cannot overlap any phrase but would dilute the cosine of a
        # long message that contains a known question.
        return {g: (1 + math.log(k)) * self.idf[g] for g, k in grams(text).items() if g in self.idf}

    def similarities(self, text: str) -> dict[int, tuple[float, float, int]]:
        """For each document sharing a distinctive n-gram with ``text``: (cosine, coverage of the document,
        number of shared words — ``#word`` unigrams and CJK bigrams).

        Coverage is the share of the document's weight found in the text: a long message that contains
        a whole known question has low cosine but full coverage. Candidates come from the postings of
        n-grams found in few documents; common n-grams ("the", "ing") still count in the score.
        """
        q = self.vector(text)
        if not q:
            return {}
        qn = _norm(q)
        rare_limit = max(20, len(self.documents) // 20)
        numbers, lens = self.grams, self.lens
        chosen = []  # (weight in the text, number) of the n-grams whose postings pick the candidates
        total = 0  # postings of the chosen n-grams
        for g, w in q.items():
            k = numbers.get(g)
            if k is not None and (n := lens[k]) <= rare_limit:
                chosen.append((w, k))
                total += n
        out = {}
        order = {g: k for k, g in enumerate(q)}
        words = {g for g in q if g.startswith("#") or len(g) == 2}
        for i in self._top_candidates(chosen, total):
            dn = self.norms[i]
            if dn == 0:
                continue
            vec = self._vector(i)
            # The n-grams in common, found by a set intersection (the documents are short, the text may
            # not be) and summed in the text's order, as a loop over the text's n-grams would.
            common = sorted(q.keys() & vec.keys(), key=order.__getitem__)
            if len(common) <= FEW_COMMON:
                dot = cov = 0.0
                for g in common:
                    w, wi = q[g], vec[g]
                    dot += w * wi
                    cov += wi * wi
            else:
                weights = list(map(vec.__getitem__, common))
                dot = _in_order(map(mul, map(q.__getitem__, common), weights))
                cov = _in_order(map(mul, weights, weights))
            shared = len(words.intersection(common))
            out[i] = (dot / (dn * qn), cov / (dn * dn) * min(1.0, self.sizes[i] / FULL_COVER_WORDS), shared)
        return out


    def _top_candidates(self, chosen: list[tuple[float, int]], total: int) -> list[int]:
        """The :data:`MAX_CANDIDATES` documents with the largest summed contribution of the ``chosen``
        n-grams (query weight × the document's weight / its norm), ties in order of first appearance;
        ``total``: how many postings they have. Few postings are summed in Python; many (a large knowledge
        base) with NumPy, imported then; both add the same floats in the same order, so the choice never
        changes an answer."""
        if total > NUMPY_FROM or (total > NUMPY_LOADED_FROM and "numpy" in sys.modules):
            return self._top_candidates_numpy(chosen)
        norms, starts, lens, docs, weights = self.norms, self.starts, self.lens, self.docs, self.weights
        partial: dict[int, float] = {}  # in order of first appearance
        get = partial.get
        for w, k in chosen:
            at = starts[k]
            for d, weight in zip(docs[at : at + lens[k]], weights[at : at + lens[k]], strict=True):
                partial[d] = get(d, 0.0) + w * weight / norms[d]
        # nlargest is sorted(..., reverse=True)[:n], which is stable: ties keep their order
        return heapq.nlargest(MAX_CANDIDATES, partial, key=partial.__getitem__)

    def _top_candidates_numpy(self, chosen: list[tuple[float, int]]) -> list[int]:
        import numpy as np

        from tracebot.matcher.spans import ranges

        flat = self.__dict__.get("_flat")
        if flat is None:
            flat = self.__dict__["_flat"] = tuple(
                np.frombuffer(a, dtype=np.int64 if a.typecode == "q" else np.float64)
                for a in (self.starts, self.lens, self.docs, self.weights, self.norms)
            )
        starts, lens, docs, weights, norms = flat
        at = np.array([k for _, k in chosen], dtype=np.int64)
        counts = lens[at]
        pos = ranges(starts[at], counts)
        all_docs = docs[pos]
        # (w × weight) / norm, as the Python sum computes each contribution
        all_contrib = np.repeat(np.array([w for w, _ in chosen]), counts) * weights[pos] / norms[all_docs]
        partial = np.bincount(all_docs, weights=all_contrib, minlength=len(norms))  # adds in order, like the loop
        # each document's first appearance (np.unique's return_index, without sorting every posting)
        first = np.full(len(norms), len(all_docs), dtype=np.int64)
        np.minimum.at(first, all_docs, np.arange(len(all_docs)))
        touched = np.flatnonzero(first < len(all_docs))
        order = np.lexsort((first[touched], -partial[touched]))[:MAX_CANDIDATES]
        return touched[order].tolist()


def _in_order(values: Iterable[float]) -> float:
    """``values`` added one after the other from 0.0, as a loop of ``+=`` adds them (``sum`` adds floats
    compensated from Python 3.12 on: other last bits)."""
    return deque(accumulate(values, initial=0.0), maxlen=1)[0]


def _norm(v: Vector) -> float:
    return math.sqrt(sum(x * x for x in v.values()))
