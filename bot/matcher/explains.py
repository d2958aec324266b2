"""Which entry's failure explains another's, read from the entries' own examples.

Some lines are printed after many different failures: PyTorch's NCCL watchdog tears the process down with
the same lines ("Some NCCL operations have failed or timed out", "watchdog thread terminated with exception")
whether a collective timed out or NCCL returned an error, and NCCL's "unhandled system error" is the code a
broken socket, a too-small ``/dev/shm`` or a failed allocation all return. When a text holds one of those
lines and the error that caused it, both entries have exact evidence, and neither their priorities (how much
an entry matters) nor their roles (both symptoms, or both root causes) say which to answer first.

The knowledge base says it: an author who labels an example with entry A although entry B's anchor or regex
fires in it too says that B's lines accompany A's failure. So A *explains* B when

- B's exact evidence fires in one of A's ``examples.match`` where A's does, on other words than A's (a
  pattern of B that fires on A's very words claims A's line: ``kb lint`` reports the example it takes),
- A's exact evidence fires in none of B's examples where B's does (both ways: neither explains the other,
  and the ranking model's order stands),
- A is no symptom explaining a root cause (root causes outrank symptoms everywhere; an example saying
  otherwise is left to ``kb lint``), and
- the pair is on no cycle of such pairs (A explains B, B explains C, C explains A: none of the three holds).

:func:`explained_by` marks the matches of one text that an explainer in the same text explains, and
:func:`tracebot.matcher.ranking.rank` puts the explainer ahead of them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tracebot.knowledge.loader import compile_pattern
from tracebot.matcher.normalize import clean
from tracebot.matcher.scan import ScanStats, text_lines

if TYPE_CHECKING:
    from tracebot.matcher.index import CompiledKB
    from tracebot.result import Match


def derive(index: CompiledKB) -> dict[str, tuple[str, ...]]:
    """Entry id → the ids of the entries it explains (see the module's docstring), both in the knowledge
    base's order; entries that explain nothing are left out. The whole relation (``kb`` tools, tests);
    answering asks :class:`Explainer` only about the entries a text has exact evidence for."""
    explainer = Explainer(index)
    out: dict[str, tuple[str, ...]] = {}
    for a, e in enumerate(index.entries):
        bs = tuple(index.entries[b].id for b in sorted(explainer.edges(a)) if explainer.explains(a, b))
        if bs:
            out[e.id] = bs
    return out


class Explainer:
    """The relation, worked out for an entry when a text first needs it (exact evidence for it and another
    entry in one text): an entry's own examples, the examples of the entries they hold evidence of, and the
    entries reachable from those (for the cycle test). Deriving the whole relation when the matcher is built
    read every example of every entry (0.5 s CPU at 1,000 entries that share no text, on every cold start);
    a text with two exact errors is rare, and what one needs is a few entries' examples."""

    def __init__(self, index: CompiledKB) -> None:
        self.index = index
        self._spans = _Spans(index)
        self._ids = {e.id: i for i, e in enumerate(index.entries)}
        self._together: dict[int, frozenset[int]] = {}
        self._by_content: dict[tuple[tuple[str, ...], ...], frozenset[int]] = {}
        self._edges: dict[int, frozenset[int]] = {}
        self._lock = threading.Lock()  # the bot answers on several threads; the memos are filled once

    def explains_ids(self, a: str, b: str) -> bool:
        """Whether entry ``a`` explains entry ``b`` (by id)."""
        ia, ib = self._ids.get(a), self._ids.get(b)
        if ia is None or ib is None:
            return False
        with self._lock:
            return self.explains(ia, ib)

    def explains(self, a: int, b: int) -> bool:
        """``a`` → ``b`` is an edge and lies on no cycle (``b`` does not reach ``a``)."""
        return b in self.edges(a) and a not in self._reach(b)

    def together(self, a: int) -> frozenset[int]:
        """The entries whose exact evidence fires in one of ``a``'s examples beside ``a``'s own."""
        found = self._together.get(a)
        if found is None:
            e = self.index.entries[a]
            # copies of one entry (same patterns, vetoes and examples) find the same entries: worked out once
            same = (self._spans.key(a), tuple(e.unless), tuple(e.examples_match))
            found = self._by_content.get(same)
            if found is None:
                found = self._by_content[same] = frozenset(
                    b for text in e.examples_match for b in self._spans.beside(a, text)
                )
            self._together[a] = found
        return found

    def edges(self, a: int) -> frozenset[int]:
        """The entries ``a`` explains before cycles are taken out: one way only, no symptom over a root cause."""
        found = self._edges.get(a)
        if found is None:
            entries = self.index.entries
            found = self._edges[a] = frozenset(
                b for b in self.together(a)
                if a not in self.together(b) and not (entries[a].role == "symptom" and entries[b].role == "root-cause")
            )
        return found

    def _reach(self, start: int) -> set[int]:
        seen: set[int] = set()
        todo = [start]
        while todo:
            for n in self.edges(todo.pop()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen


class _Spans:
    """Where on a line each entry's anchors and regexes match. Entries with the same patterns (copies of one
    entry, as a scaled knowledge base has) share one compiled list and one answer per line: each pattern
    list is compiled once, on first use, and run once per line."""

    def __init__(self, index: CompiledKB) -> None:
        self.index = index
        self._keys: dict[int, tuple[str, ...]] = {}
        self._compiled: dict[tuple[str, ...], list[Any]] = {}
        self._found: dict[tuple[tuple[str, ...], str], list[tuple[int, int]]] = {}
        self._lines: dict[str, tuple[str, frozenset[int]]] = {}  # an example's line → (clean, entries fired)

    def line(self, raw: str) -> tuple[str, frozenset[int]]:
        """A line of an example, cleaned, and the entries whose evidence fires on it (once per distinct line)."""
        seen = self._lines.get(raw)
        if seen is None:
            clean_line = clean(raw).text
            seen = self._lines[raw] = (clean_line, frozenset(self.index.fired(clean_line)) if clean_line else frozenset())
        return seen

    def key(self, ei: int) -> tuple[str, ...]:
        """Entry ``ei``'s anchors (escaped) and regexes: the same for copies of one entry."""
        key = self._keys.get(ei)
        if key is None:
            e = self.index.entries[ei]
            key = self._keys[ei] = (*map(re.escape, e.anchors), *e.regex)
        return key

    def of(self, ei: int, line: str) -> list[tuple[int, int]]:
        key = self.key(ei)
        found = self._found.get((key, line))
        if found is None:
            patterns = self._compiled.get(key)
            if patterns is None:
                patterns = self._compiled[key] = [compile_pattern(p) for p in key]
            found = self._found[(key, line)] = [(m.start(), m.end()) for p in patterns for m in p.finditer(line)]
        return found

    def beside(self, a: int, text: str) -> set[int]:
        """The entries other than ``a`` whose exact evidence fires in ``text`` on a part of a line that none of
        ``a``'s own evidence covers, when ``a``'s fires in ``text`` too. A pattern that fires on the very
        words of ``a``'s line is no other error beside it: it claims ``a``'s line (``kb lint`` reports the
        example it takes)."""
        fired_a = False
        found: set[int] = set()
        for _no, raw in text_lines(text, ScanStats()):
            line, fired = self.line(raw)
            if a in fired:
                fired_a = True
            others = fired - {a} - found
            if not others:
                continue
            mine = self.of(a, line) if a in fired else []
            outside: dict[tuple[str, ...], bool] = {}  # per pattern list: a span outside a's (copies share it)
            for b in others:
                kb = self.key(b)
                if kb not in outside:
                    outside[kb] = any(all(end <= s or start >= e for s, e in mine) for start, end in self.of(b, line))
                if outside[kb]:
                    found.add(b)
        return found if fired_a else set()


def explained_by(matches: Sequence[Match], explains: Callable[[str, str], bool], exact: Iterable[str]) -> None:
    """Set each match's ``explained_by``: the other matches of the same text whose entry explains its entry,
    both with exact evidence (``exact``: the ids of the matches that have some)."""
    with_evidence = set(exact)
    for m in matches:
        m.explained_by = [
            o.entry_id for o in matches
            if o is not m and m.entry_id in with_evidence and o.entry_id in with_evidence
            and explains(o.entry_id, m.entry_id)
        ]

