"""Character n-gram vectors for prose, in any script.

Token-based fuzzy scorers fail on Chinese and Japanese (no spaces between words), so prose questions
are compared as bags of character n-grams: trigrams inside Latin words, bigrams over runs of CJK
characters, weighted by inverse document frequency over the knowledge base's phrases so that common
n-grams ("the", "ing", "する") carry little weight.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter

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
    """IDF-weighted n-gram vectors of a set of short documents (phrases), with cosine / coverage.

    Kept compact for the matcher cache: postings as typed arrays, each document's vector rebuilt from
    its text on first use (the same floats), so loading a cached index costs little more than its idf
    table, and no NumPy."""

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
        docs: dict[str, list[int]] = {}
        for i in range(len(documents)):
            for g in self._vectors[i]:
                docs.setdefault(g, []).append(i)
        # For each n-gram: the documents that have it, and their weight of it.
        self.postings: dict[str, tuple[array, array]] = {
            g: (array("l", ds), array("d", [self._vectors[i][g] for i in ds])) for g, ds in docs.items()
        }

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_vectors"] = {}  # rebuilt from the documents on first use
        return state

    def _weigh(self, c: Counter[str]) -> Vector:
        return {g: (1 + math.log(k)) * self.idf.get(g, self.default_idf) for g, k in c.items()}

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
        norms = self.norms
        partial: dict[int, float] = {}  # in order of first appearance, which breaks ties
        for g, w in q.items():
            posting = self.postings.get(g)
            if posting is not None and len(posting[0]) <= rare_limit:
                for d, weight in zip(*posting, strict=True):
                    partial[d] = partial.get(d, 0.0) + w * weight / norms[d]
        candidates = sorted(partial, key=lambda d: -partial[d])[:MAX_CANDIDATES]  # stable: ties keep order
        out = {}
        for i in candidates:
            dn = self.norms[i]
            if dn == 0:
                continue
            vec = self._vector(i)
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


def _norm(v: Vector) -> float:
    return math.sqrt(sum(x * x for x in v.values()))
