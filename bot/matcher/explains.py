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
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tracebot.knowledge.loader import compile_pattern
from tracebot.matcher.normalize import clean
from tracebot.matcher.scan import ScanStats, text_lines

if TYPE_CHECKING:
    from tracebot.matcher.index import CompiledKB
    from tracebot.result import Match


def derive(index: CompiledKB) -> dict[str, tuple[str, ...]]:
    """Entry id → the ids of the entries it explains (see the module's docstring), both in the knowledge
    base's order; entries that explain nothing are left out."""
    entries = index.entries
    spans = _Spans(index)
    together: set[tuple[int, int]] = set()  # (a, b): b's exact evidence in one of a's examples, beside a's
    for a, e in enumerate(entries):
        for text in e.examples_match:
            together.update((a, b) for b in spans.beside(a, text))
    edges = {
        (a, b) for a, b in together
        if (b, a) not in together and not (entries[a].role == "symptom" and entries[b].role == "root-cause")
    }
    edges -= _on_cycles(edges)
    out: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        out.setdefault(entries[a].id, []).append(entries[b].id)
    return {a: tuple(bs) for a, bs in out.items()}


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

    def of(self, ei: int, line: str) -> list[tuple[int, int]]:
        key = self._keys.get(ei)
        if key is None:
            e = self.index.entries[ei]
            key = self._keys[ei] = (*map(re.escape, e.anchors), *e.regex)
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
            found.update(
                b for b in others
                if any(all(end <= s or start >= e for s, e in mine) for start, end in self.of(b, line))
            )
        return found if fired_a else set()


def _on_cycles(edges: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The edges that lie on a cycle: both ends reach each other."""
    nexts: dict[int, set[int]] = {}
    for a, b in edges:
        nexts.setdefault(a, set()).add(b)

    def reach(start: int) -> set[int]:
        seen: set[int] = set()
        todo = [start]
        while todo:
            for n in nexts.get(todo.pop(), ()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    reached = {a: reach(a) for a in nexts}
    return {(a, b) for a, b in edges if a in reached.get(b, ())}


def explained_by(matches: Sequence[Match], explains: dict[str, tuple[str, ...]], exact: Iterable[str]) -> None:
    """Set each match's ``explained_by``: the other matches of the same text whose entry explains its entry,
    both with exact evidence (``exact``: the ids of the matches that have some)."""
    with_evidence = set(exact)
    for m in matches:
        m.explained_by = [
            o.entry_id for o in matches
            if o is not m and m.entry_id in with_evidence and o.entry_id in with_evidence
            and m.entry_id in explains.get(o.entry_id, ())
        ]

