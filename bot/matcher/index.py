"""The knowledge base compiled for matching: one RE2 set for every anchor and regex, one trigger
regex that picks candidate lines out of long logs, the masked exemplars with a token index, and the
n-gram index of phrases. Built once per knowledge-base load."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from tracebot.knowledge.entry import Entry
from tracebot.knowledge.loader import KnowledgeBase, compile_pattern
from tracebot.matcher.candidates import CandidateStage
from tracebot.matcher.ngrams import NgramIndex
from tracebot.matcher.normalize import mask

# Words that make a line worth a closer look in a long log. They only select candidate lines; they
# never make a match on their own.
ERROR_WORD_LIST = [
    "error", "exception", "traceback", "fail", "fatal", "killed", "abort", "timeout", "timed out",
    "time limit", "panic", "segmentation", "signal", "warn", "oom", "out of memory", "cannot", "can't",
    "unable", "refused", "denied", "invalid", "not found", "unhandled", "terminat", "hang", "hung", "stuck",
    "stall", "exited", "exit code", "exitcode", "core dump", "xid",
    "エラー", "例外", "失敗", "タイムアウト", "止ま", "落ち",
]
ERROR_WORDS = "|".join(ERROR_WORD_LIST)  # plain literals: also a valid regex alternation
# Lines a long log's triage needs besides error lines: a traceback's frames (``File "x.py", line 3, in f``)
# name the user's code where the failure happened; torchrun's and Lightning's statements of the world
# size tell which ranks never reported. Each is printed a few times per job, not per step.
CONTEXT_WORDS = ['", line ', "world_size", "MEMBER: "]
# Short texts get a closer look at any line that names the usual suspects, even without an error word.
_ERRORISH = re.compile(ERROR_WORDS + r"|nccl|cuda|ecc|gpu", re.IGNORECASE)
_TOKEN = re.compile(r"[a-z][a-z0-9_]{3,}")
_STOP_TOKENS = frozenset(
    [
        "error",
        "errors",
        "exception",
        "with",
        "from",
        "that",
        "this",
        "have",
        "been",
        "were",
        "when",
        "line",
        "file",
        "most",
        "recent",
        "call",
        "last",
        "none",
        "true",
        "false",
        "self",
        "return",
        "raise",
        "runtimeerror",
        "valueerror",
        "info",
        "warning",
    ]
)


@dataclass(frozen=True)
class Strong:
    entry: int  # index into entries
    kind: str  # "anchor" | "regex"
    signature: str


@dataclass(frozen=True)
class Exemplar:
    entry: int
    text: str  # original
    masked: str


def looks_like_error(text: str) -> bool:
    return _ERRORISH.search(text) is not None


def tokens(masked: str) -> set[str]:
    return {t for t in _TOKEN.findall(masked) if t not in _STOP_TOKENS}


class CompiledKB:
    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.entries: list[Entry] = list(kb.entries)
        self.strong: list[Strong] = []
        options = re2.Options()
        options.case_sensitive = False
        options.max_mem = 256 << 20
        self.strong_set = re2.Set.SearchSet(options)
        anchors: list[str] = []
        regexes: list[str] = []
        for ei, e in enumerate(self.entries):
            for a in e.anchors:
                self._add_strong(ei, "anchor", a, re2.escape(a))
                anchors.append(a)
            for r in e.regex:
                self._add_strong(ei, "regex", r, r)
                regexes.append(_unanchor(r))
        if self.strong:
            self.strong_set.Compile()
        # Trigger: picks candidate lines out of whole blocks of a long log, linear in the log.
        self.trigger = CandidateStage(ERROR_WORD_LIST + CONTEXT_WORDS, anchors, regexes)
        self.root_causes = frozenset(ei for ei, e in enumerate(self.entries) if e.role == "root-cause")
        # Entry regexes with named groups: they read the values of the line an entry matched (facts).
        self.readers: dict[int, list[Any]] = {}
        for ei, e in enumerate(self.entries):
            for r in e.regex:
                if "(?P<" in r:
                    self.readers.setdefault(ei, []).append(compile_pattern(r))
        self.unless: dict[int, list[Any]] = {
            ei: [compile_pattern(p) for p in e.unless] for ei, e in enumerate(self.entries) if e.unless
        }
        self.exemplars: list[Exemplar] = [
            Exemplar(ei, x, mask(x)) for ei, e in enumerate(self.entries) for x in e.exemplars
        ]
        self.token_index: dict[str, list[int]] = {}
        for xi, x in enumerate(self.exemplars):
            for t in tokens(x.masked):
                self.token_index.setdefault(t, []).append(xi)
        # Tokens found in too many exemplars say nothing about which one fits.
        limit = max(8, len(self.exemplars) // 20)
        self.token_index = {t: xs for t, xs in self.token_index.items() if len(xs) <= limit}
        phrase_docs: list[str] = []
        self.phrase_owner: list[int] = []
        for ei, e in enumerate(self.entries):
            # Titles are not phrases: a title names the failure the way logs do, and matched healthy
            # lines as prose ("Driver Version … CUDA Version"). Authors write phrases for questions.
            for p in e.phrases:
                phrase_docs.append(p)
                self.phrase_owner.append(ei)
        self.phrase_texts = phrase_docs
        self.phrases = NgramIndex(phrase_docs)
        search_docs = [
            " ".join([e.id.replace("-", " "), e.title, e.summary, " ".join(e.tags), *e.phrases, *e.anchors])
            for e in self.entries
        ]
        self.search_index = NgramIndex(search_docs)

    def _add_strong(self, ei: int, kind: str, signature: str, pattern: str) -> None:
        idx = self.strong_set.Add(pattern)
        assert idx == len(self.strong)  # RE2 numbers patterns in the order they are added
        self.strong.append(Strong(ei, kind, signature))

    def strong_hits(self, clean_text: str) -> list[Strong]:
        if not self.strong:
            return []
        return [self.strong[i] for i in (self.strong_set.Match(clean_text) or ())]

    def vetoed(self, ei: int, clean_text: str) -> bool:
        return any(p.search(clean_text) for p in self.unless.get(ei, ()))


def _unanchor(pattern: str) -> str:
    """Drop a leading ^ / trailing $ so an entry regex written for the clean line can still pick the raw
    line (which has prefixes) out of a long log; the clean line is then matched exactly."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1]
    return pattern
