"""What the ranking model knows about a text and one entry: the signals, as numbers.

The text side: its kind (log line, traceback, log, question, chat), the exception type and message a
Python traceback ends with, whether it has error content at all. The entry side: TF-IDF vectors (character
2–4-grams and words) of everything the entry says — title, summary, cause, phrases, anchors, exemplars,
its own ``examples.match`` — summed per entry, so that one text is compared with every entry in one sparse
product. The evidence the matcher found on lines (anchors, regexes, fuzzy exemplars, prose phrases) comes
in from ``core``; this module only turns it into a row of features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from tracebot.knowledge.entry import Entry
from tracebot.matcher.index import looks_like_error

KINDS = ("line", "traceback", "log", "question", "chat")

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+", re.MULTILINE)
# The last "SomethingError: message" line of a text is what a traceback ends with.
_EXCEPTION = re.compile(
    r"^(?:.*?[\s\]:|>])?(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit|Warning))"
    r"(?::\s*(?P<msg>.*))?$",
    re.MULTILINE,
)
# Asking, not telling: "this is how we launch" is a statement.
_QUESTION = re.compile(
    r"[?？]|^\s*(?:how|why|what|which|anyone|any idea|is there|does|do|should|can|could|help)\b"
    r"|なぜ|でしょうか|ですか|教えて|どうすれば|どうしたら",
    re.IGNORECASE | re.MULTILINE,
)
_ERROR_CONTENT = re.compile(
    r"[A-Z]\w*(?:Error|Exception)\b|\b(?:nccl|cuda|oom|sigkill|sigterm|sigbus|xid|ecc|exit ?code|exitcode|timed? ?out"
    r"|killed|segfault|core dumped|hang|hangs|hung|stuck|deadlock|watchdog|slurm|sagemaker|gpu|rank\d*|errno)\b"
    r"|エラー|落ち|止ま|メモリ|固ま",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class TextInfo:
    kind: str
    lines: int
    has_error: bool  # names an error, a tool or a failure at all
    exception: str  # "Type: message" of the last exception line, or ""
    exception_type: str  # the type's last dotted part (OutOfMemoryError), or ""
    asks: bool = False  # the prose asks something (a question mark, how / why, 教えて …)


def text_info(text: str, prose: str) -> TextInfo:
    """Read the shape of a pasted text. ``prose`` is the part a person wrote (``core.prose_lines``)."""
    stripped = text.strip()
    lines = [x for x in stripped.splitlines() if x.strip()]
    exc = exc_type = ""
    for m in _EXCEPTION.finditer(stripped):
        exc_type = m.group("type").rsplit(".", 1)[-1]
        exc = f"{exc_type}: {m.group('msg') or ''}".strip()
    has_error = bool(_ERROR_CONTENT.search(stripped)) or looks_like_error(stripped)
    words = len(_WORD.findall(stripped)) + len(_CJK.findall(stripped)) // 2
    if _TRACEBACK.search(stripped):
        kind = "traceback"
    elif prose and len(prose) >= 0.5 * len(stripped):
        kind = "chat" if words <= 12 and len(lines) <= 2 and not exc else "question"
    elif len(lines) >= 3:
        kind = "log"
    else:
        kind = "chat" if words <= 8 and not has_error and not exc else "line"
    # Japanese (or Chinese) prose describing a failure is a request for help, with or without a question mark.
    asks = bool(prose) and (bool(_QUESTION.search(prose)) or len(_CJK.findall(prose)) >= 8)
    return TextInfo(kind, len(lines), has_error, exc, exc_type, asks)


def entry_parts(e: Entry, *, with_examples: bool = True) -> list[str]:
    """The texts an entry is known by, each compared as one unit (its TF-IDF vector is L2-normalised
    before the entry's vectors are summed, so a long example does not outweigh a title)."""
    parts = [e.title, e.summary, e.cause, *e.phrases, *e.anchors, *e.exemplars]
    if with_examples:
        parts += e.examples_match
    return [p for p in parts if p.strip()]


def _vectorizers() -> tuple[TfidfVectorizer, TfidfVectorizer]:
    char = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), lowercase=True, sublinear_tf=True, min_df=1, dtype=np.float32
    )
    word = TfidfVectorizer(
        analyzer="word",
        token_pattern=r"(?u)[^\W\d_][\w.]*\w|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2}",
        ngram_range=(1, 2),
        lowercase=True,
        sublinear_tf=True,
        min_df=1,
        dtype=np.float32,
    )
    return char, word


class TextSpace:
    """Character and word TF-IDF over the entries' texts; per entry, the sum of its parts' vectors.

    ``similarities`` gives the cosine of a text with every entry's sum; with ``leave_out`` (the text is
    itself one of an entry's parts), that part is taken out of the sum first, so training sees the same
    kind of number an unseen text gets.
    """

    def __init__(self, parts: list[str], owners: list[int], n_entries: int):
        self.n_entries = n_entries
        self.char, self.word = _vectorizers()
        mats = [self.char.fit_transform(parts), self.word.fit_transform(parts)]
        owner = sparse.csr_matrix(
            (np.ones(len(owners), dtype=np.float32), (owners, np.arange(len(owners)))), shape=(n_entries, len(parts))
        )
        self.sums = [(owner @ m).tocsr() for m in mats]  # entries × features
        self.sq_norms = [np.asarray(s.multiply(s).sum(axis=1)).ravel() for s in self.sums]
        # Parts come grouped by entry (owners ascending): the best single part per entry is a reduceat.
        if list(owners) != sorted(owners) or set(owners) != set(range(n_entries)):
            raise ValueError("parts must be grouped by entry, every entry with at least one part")
        self.parts = [m.T.tocsr() for m in mats]  # features × parts, for text @ parts
        self.starts = np.searchsorted(np.asarray(owners), np.arange(n_entries))

    def vectors(self, texts: list[str]) -> list[sparse.csr_matrix]:
        return [self.char.transform(texts), self.word.transform(texts)]

    def similarities(self, vecs: list[sparse.csr_matrix], leave_out: list[int] | None = None) -> list[np.ndarray]:
        """For each space, a (texts × entries) array of cosines. ``leave_out[i]`` is the entry whose sum
        text ``i`` is a part of (-1: none)."""
        out = []
        for v, s, sq in zip(vecs, self.sums, self.sq_norms, strict=True):
            dots = (v @ s.T).toarray()
            norms = np.tile(sq, (v.shape[0], 1))
            if leave_out is not None:
                self_sq = np.asarray(v.multiply(v).sum(axis=1)).ravel()
                for i, ei in enumerate(leave_out):
                    if ei >= 0:
                        dots[i, ei] -= self_sq[i]
                        norms[i, ei] = max(norms[i, ei] - 2 * (dots[i, ei] + self_sq[i]) + self_sq[i], 0.0)
            out.append(dots / np.sqrt(np.maximum(norms, 1e-12)))
        return out

    def nearest(self, vecs: list[sparse.csr_matrix], leave_out: list[int] | None = None, chunk: int = 256) -> list[np.ndarray]:
        """For each space, a (texts × entries) array: the cosine of the text with the entry's closest
        single part. ``leave_out[i]`` is the index of the part text ``i`` is (-1: none)."""
        out = []
        for v, p in zip(vecs, self.parts, strict=True):
            res = np.zeros((v.shape[0], self.n_entries), dtype=np.float32)
            for lo in range(0, v.shape[0], chunk):
                sims = (v[lo : lo + chunk] @ p).toarray()
                if leave_out is not None:
                    for i in range(sims.shape[0]):
                        if leave_out[lo + i] >= 0:
                            sims[i, leave_out[lo + i]] = 0.0
                res[lo : lo + chunk] = np.maximum.reduceat(sims, self.starts, axis=1)
            out.append(res)
        return out
