"""The knowledge base compiled for matching: the candidate stage (which finds the anchors and regexes
on a clean line, and picks candidate lines out of long logs), the masked exemplars with a token index,
and the n-gram index of phrases. Built once per knowledge-base change: it pickles (the matcher cache,
:mod:`tracebot.matcher.loading`), and what it compiles on first use is left out of the pickle."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tracebot.knowledge.entry import Entry
from tracebot.knowledge.loader import KnowledgeBase, compile_pattern
from tracebot.matcher.candidates import CandidateStage, unanchor
from tracebot.matcher.ngrams import NgramIndex
from tracebot.matcher.normalize import mask

if TYPE_CHECKING:
    from tracebot.matcher.explains import Explainer

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
# name the user's code where the failure happened; torchrun's, Lightning's, NCCL's and srun's statements
# of the world size tell which ranks never reported. Each is printed a few times per job, not per step.
CONTEXT_WORDS = ['", line ', "world_size", "MEMBER: ", " nranks ", "ntasks"]
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
        anchors: list[Strong] = []
        regexes: list[Strong] = []
        for ei, e in enumerate(self.entries):
            anchors += [Strong(ei, "anchor", a) for a in e.anchors]
            regexes += [Strong(ei, "regex", r) for r in e.regex]
        # The candidate stage numbers anchors first, then regexes; hits are reported in each entry's own
        # order (its anchors, then its regexes), as the entry lists them.
        self.strong: list[Strong] = anchors + regexes
        order = sorted(range(len(self.strong)), key=lambda i: (self.strong[i].entry, self.strong[i].kind != "anchor", i))
        self._rank = [0] * len(order)
        for r, i in enumerate(order):
            self._rank[i] = r
        # Candidate lines of long logs, and the anchors and regexes of one clean line: one pass of one
        # Hyperscan literal database either way, linear in the text and flat in the knowledge base.
        self.trigger = CandidateStage(ERROR_WORD_LIST + CONTEXT_WORDS, [s.signature for s in anchors], [s.signature for s in regexes])
        self._unless_patterns = {ei: list(e.unless) for ei, e in enumerate(self.entries) if e.unless}
        self.root_causes = frozenset(ei for ei, e in enumerate(self.entries) if e.role == "root-cause")
        # Entry regexes with named groups read the values of the line an entry matched (facts).
        self._reader_patterns = {
            ei: [r for r in e.regex if "(?P<" in r] for ei, e in enumerate(self.entries) if any("(?P<" in r for r in e.regex)
        }
        self._compiled: dict[tuple[str, int], list[Any]] = {}  # (which, entry) -> patterns, on first use
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
        # The ranking model's cache key, computed by the loader when it builds the index and cached with
        # it (:func:`tracebot.matcher.loading.load_compiled`); otherwise the model hashes the entries.
        self.model_key: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_compiled"] = {}  # compiled again on first use
        state.pop("search_index", None)
        state.pop("explainer", None)  # compiled patterns: worked out again on first need
        return state

    @cached_property
    def search_index(self) -> NgramIndex:
        """What ``kb search`` compares a query with; built on first use (diagnosing never needs it)."""
        return NgramIndex([
            " ".join([e.id.replace("-", " "), e.title, e.summary, " ".join(e.tags), *e.phrases, *e.anchors])
            for e in self.entries
        ])

    def strong_hits(self, clean_text: str) -> list[Strong]:
        if not self.strong:
            return []
        found = self.trigger.matches(clean_text)
        if len(found) > 1:
            found.sort(key=self._rank.__getitem__)
        return [self.strong[i] for i in found]

    def fired(self, clean_text: str) -> list[int]:
        """The entries whose anchor or regex fires on one clean line and is not vetoed by their ``unless``."""
        return [s.entry for s in self.strong_hits(clean_text) if not self.vetoed(s.entry, clean_text)]

    @property
    def explains(self) -> dict[str, tuple[str, ...]]:
        """Entry id → the entries whose failure it explains, read from the entries' examples
        (:mod:`tracebot.matcher.explains`): the whole relation, derived on each call (tools and tests)."""
        from tracebot.matcher.explains import derive

        return derive(self)

    @cached_property
    def explainer(self) -> Explainer:
        """The relation as answering asks it, one pair of entries at a time, worked out on first need."""
        from tracebot.matcher.explains import Explainer

        return Explainer(self)

    def _patterns(self, which: str, ei: int) -> list[Any]:
        """Entry ``ei``'s ``unless`` or named-group ``readers`` patterns, compiled on first use."""
        compiled = self._compiled.get((which, ei))
        if compiled is None:
            source = self._unless_patterns if which == "unless" else self._reader_patterns
            compiled = self._compiled[(which, ei)] = [compile_pattern(p) for p in source.get(ei, ())]
        return compiled

    def readers(self, ei: int) -> list[Any]:
        """Entry ``ei``'s regexes with named groups (they read the values of its matched line)."""
        return self._patterns("readers", ei)

    def reader_sources(self, ei: int) -> tuple[str, ...]:
        """The sources of :meth:`readers` (the same for copies of one entry)."""
        return tuple(self._reader_patterns.get(ei, ()))

    def vetoed(self, ei: int, clean_text: str) -> bool:
        if ei not in self._unless_patterns:
            return False
        return any(p.search(clean_text) for p in self._patterns("unless", ei))


_unanchor = unanchor  # the name tests and benchmarks import
