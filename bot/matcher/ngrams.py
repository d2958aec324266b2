"""Character n-gram vectors for prose, in any script.

Token-based fuzzy scorers fail on Chinese and Japanese (no spaces between words), so prose questions
are compared as bags of character n-grams: trigrams inside Latin words, bigrams over runs of CJK
characters, weighted by inverse document frequency over the knowledge base's phrases so that common
n-grams ("the", "ing", "する") carry little weight.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[a-z][a-z0-9_]*(?:[-.][a-z0-9_]+)*")  # nvidia-smi, torch.distributed: one word
_NUM = re.compile(r"\d+")

Vector = dict[str, float]
FULL_COVER_WORDS = 5
MAX_CANDIDATES = 64  # documents scored exactly, chosen by their overlap on distinctive n-grams


def grams(text: str) -> Counter[str]:
    """N-grams of ``text``: ``#word`` unigrams and trigrams of Latin words, bigrams of CJK runs."""
    text = _NUM.sub(" ", text.lower())
    out: Counter[str] = Counter()
    for word in _WORD.findall(text):
        if len(word) < 2:
            continue
        out["#" + word] += 1
        padded = f" {word} "
        for i in range(len(padded) - 2):
            out[padded[i : i + 3]] += 1
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out[run] += 1
        for i in range(len(run) - 1):
            out[run[i : i + 2]] += 1
    return out


class NgramIndex:
    """IDF-weighted n-gram vectors of a set of short documents (phrases), with cosine / coverage."""

    def __init__(self, documents: list[str]):
        counts = [grams(d) for d in documents]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        n = max(1, len(documents))
        self.idf = {g: math.log((n + 1) / (k + 0.5)) for g, k in df.items()}
        self.default_idf = math.log(n + 1)
        self.vectors = [self._weigh(c) for c in counts]
        # How much a document says: distinct words (Latin) or CJK bigrams. Coverage of a two-word phrase
        # is cheap, so coverage counts in proportion to this.
        self.sizes = [
            sum(1 for g in c if g.startswith("#")) + sum(1 for g in c if len(g) == 2) for c in counts
        ]
        self.norms = [_norm(v) for v in self.vectors]
        self.postings: dict[str, list[int]] = {}
        for i, v in enumerate(self.vectors):
            for g in v:
                self.postings.setdefault(g, []).append(i)
        self._norms = np.array(self.norms or [0.0])
        self._post_arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _weigh(self, c: Counter[str]) -> Vector:
        return {g: (1 + math.log(k)) * self.idf.get(g, self.default_idf) for g, k in c.items()}

    def vector(self, text: str) -> Vector:
        # Unknown n-grams get no weight: they cannot overlap any phrase but would dilute the cosine of a
        # long message that contains a known question.
        return {g: (1 + math.log(k)) * self.idf[g] for g, k in grams(text).items() if g in self.idf}

    def _posting_arrays(self, g: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The posting of ``g`` as arrays (documents, their weight of ``g``, their norm), built on first
        use, so candidate scoring costs a few array operations however many documents share ``g``."""
        arrays = self._post_arrays.get(g)
        if arrays is None:
            docs = self.postings.get(g)
            if docs is None:
                return None
            arrays = (np.array(docs), np.array([self.vectors[i][g] for i in docs]), self._norms[docs])
            self._post_arrays[g] = arrays
        return arrays

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
        rare_limit = max(20, len(self.vectors) // 20)
        docs, contrib = [], []
        for g, w in q.items():
            arrays = self._posting_arrays(g)
            if arrays is not None and len(arrays[0]) <= rare_limit:
                docs.append(arrays[0])
                contrib.append(w * arrays[1] / arrays[2])
        candidates = _top_candidates(docs, contrib, len(self.vectors))
        out = {}
        for i in candidates:
            vec, dn = self.vectors[i], self.norms[i]
            if dn == 0:
                continue
            dot = cov = 0.0
            shared = 0
            for g, w in q.items():
                wi = vec.get(g)
                if wi is not None:
                    dot += w * wi
                    cov += wi * wi
                    shared += g.startswith("#") or len(g) == 2
            out[i] = (dot / (dn * qn), cov / (dn * dn) * min(1.0, self.sizes[i] / FULL_COVER_WORDS), shared)
        return out


def _top_candidates(docs: list, contrib: list, n_docs: int) -> list[int]:
    """The :data:`MAX_CANDIDATES` documents with the largest summed contribution, ties in order of first
    appearance; each sum is added up in the same order as a loop over ``docs`` would (same floats)."""
    if not docs:
        return []
    all_docs, all_contrib = np.concatenate(docs), np.concatenate(contrib)
    partial = np.bincount(all_docs, weights=all_contrib, minlength=n_docs)
    touched, first = np.unique(all_docs, return_index=True)
    order = np.lexsort((first, -partial[touched]))[:MAX_CANDIDATES]
    return touched[order].tolist()


def _norm(v: Vector) -> float:
    return math.sqrt(sum(x * x for x in v.values()))
