"""The candidate stage: which lines of a block of log bytes are worth scoring, in time linear in the log
and nearly flat in the size of the knowledge base.

A line is a candidate when it holds an error word, an entry's anchor, or a match of an entry's regex
(unanchored), all case-insensitively: the same lines one big ``(?i)`` alternation would pick. One big
alternation outgrows RE2's DFA memory at ~1,850 entries and falls back to the NFA (a thousand times
slower), so the work is split:

* literals (error words, anchors, and for each regex the longest literal it cannot match without) go
  through one Hyperscan literal database (SIMD multi-literal matching, GB/s, caseless): one pass over
  the block, whatever their number;
* a line found through a regex's literal is kept only if the regex itself matches it (so the stage
  selects exactly what the alternation selected);
* regexes with no usable literal, and anchors with non-ASCII letters (RE2 folds their case by
  Unicode, Hyperscan by ASCII), go into RE2 alternations of at most :data:`SHARD_PATTERNS` patterns,
  each small enough to stay in the DFA.

Hyperscan also runs every regex itself, but compiling a thousand entries' regexes takes it ~40 s;
literals compile in milliseconds (1.5 s for 26,000).
"""

from __future__ import annotations

import re
import threading
from typing import Any

import hyperscan
import re2

SHARD_PATTERNS = 64  # patterns per RE2 alternation: far below where its DFA runs out of memory
SHARD_MAX_MEM = 64 << 20
MIN_LITERAL = 4  # shorter required literals (", ", "id") would pick too many lines to verify


def _options(case_sensitive: bool = True) -> Any:
    o = re2.Options()
    o.max_mem = SHARD_MAX_MEM
    o.case_sensitive = case_sensitive
    return o


def required_literals(pattern: str) -> list[str] | None:
    """ASCII literals, lower-cased, one of which every match of ``pattern`` contains (the longest single
    literal when there is one; ``FAILED|CANCELLED`` gives both), or None.

    Read with Python's regex parser (RE2's syntax is close to a subset of it); a pattern Python cannot
    read, or with no literal of :data:`MIN_LITERAL` characters in every match, has none and goes to the
    RE2 shards instead."""
    try:
        parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    return _required(parsed)


def required_literal(pattern: str) -> str | None:
    """The one literal every match of ``pattern`` contains, when :func:`required_literals` finds one."""
    found = required_literals(pattern)
    return found[0] if found and len(found) == 1 else None


_C = re._constants  # type: ignore[attr-defined]


def _required(items: Any) -> list[str] | None:
    best: list[str] | None = None

    def consider(found: list[str] | None) -> None:
        nonlocal best
        if not found or min(map(len, found)) < MIN_LITERAL or any("\n" in x for x in found):
            return
        if best is None or (min(map(len, found)), -len(found)) > (min(map(len, best)), -len(best)):
            best = found

    run: list[str] = []
    for op, arg in [*items, (None, None)]:
        if op is _C.LITERAL and arg < 128:
            run.append(chr(arg))
            continue
        if run:
            consider(["".join(run).lower()])
            run = []
        if op is _C.SUBPATTERN:
            consider(_required(arg[-1]))
        elif op is _C.BRANCH:
            branches = [_required(b) for b in arg[1]]
            if all(branches):
                union = {x for b in branches for x in b}  # type: ignore[union-attr]
                # "cancelled by " needs no key of its own where "cancelled" is one
                consider(sorted(x for x in union if not any(y != x and y in x for y in union)))
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and arg[0] >= 1:
            consider(_required(arg[2]))
    return best


class CandidateStage:
    """Picks candidate lines out of blocks of log bytes, and tells which anchors and regexes one clean line
    matches; see the module's docstring.

    ``words``: literals that make any line a candidate (the error words); ``anchors``: entries' literal
    anchors; ``regexes``: entries' regexes (matched as written on a clean line by :meth:`matches`,
    unanchored on raw lines by :meth:`line_starts`). Pattern ``i`` of :meth:`matches` is ``anchors[i]``,
    then ``regexes[i - len(anchors)]``.

    Everything slow to build is either stored in the matcher cache (the Hyperscan database, serialized)
    or built on first use (each regex, the RE2 shards), so a cached stage loads in milliseconds and a
    paste never compiles the shards a long log needs."""

    def __init__(self, words: list[str], anchors: list[str], regexes: list[str]):
        self.n_anchors = len(anchors)
        self.regexes = list(regexes)
        keys: dict[bytes, int] = {}
        self._direct: list[bool] = []  # key -> makes a line a candidate by itself
        self._key_anchors: list[list[int]] = []  # key -> the anchors it is (pattern numbers)
        self._key_regexes: list[list[int]] = []  # key -> the regexes that require it (pattern numbers)

        def key(literal: str) -> int:
            k = keys.setdefault(literal.lower().encode(), len(keys))
            if k == len(self._direct):
                self._direct.append(False)
                self._key_anchors.append([])
                self._key_regexes.append([])
            return k

        self._shard_patterns: list[str] = []  # for line_starts, unanchored
        self._rest: list[tuple[int, str]] = []  # for matches: (pattern number, pattern)
        for w in words:
            if _caseless_ascii(w):
                self._direct[key(w)] = True
            elif w:
                self._shard_patterns.append(re2.escape(w))
        for i, a in enumerate(anchors):
            if _caseless_ascii(a):
                k = key(a)
                self._direct[k] = True
                self._key_anchors[k].append(i)
            elif a:
                self._shard_patterns.append(re2.escape(a))
                self._rest.append((i, re2.escape(a)))
        for i, r in enumerate(self.regexes, self.n_anchors):
            literals = required_literals(r)
            if literals is None:
                self._shard_patterns.append(unanchor(r))
                self._rest.append((i, r))
            for lit in literals or ():
                self._key_regexes[key(lit)].append(i)
        self._keys = list(keys)
        self.literals = _literal_database(self._keys) if self._keys else None
        self._lazy()

    def _lazy(self) -> None:
        self._scratch = threading.local()  # Hyperscan scratch space is per thread
        self._raw_rx: dict[int, list[Any]] = {}  # key -> its regexes, unanchored, for raw log bytes
        self._clean_rx: dict[int, tuple[Any, list[int]]] = {}  # key -> its regexes as written, for clean lines
        self._shards: list[Any] | None = None
        self._rest_set: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k in _PICKLED}
        state["literals"] = hyperscan.dumpb(self.literals) if self.literals is not None else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.literals is not None:
            self.literals = hyperscan.loadb(self.literals, hyperscan.HS_MODE_BLOCK)
        self._lazy()

    # ---- long logs: which lines are candidates ------------------------------------------------------
    def line_starts(self, block: bytes) -> list[int]:
        """Offsets (sorted, distinct) of the starts of the candidate lines in ``block``."""
        starts: set[int] = set()
        if self.literals is not None:
            self._literal_lines(block, starts)
        if self._shards is None:
            self._shards = _alternations(self._shard_patterns)
        for shard in self._shards:
            pos = 0
            while True:
                m = shard.search(block, pos)
                if m is None:
                    break
                start = m.start()
                starts.add(block.rfind(b"\n", 0, start) + 1)
                end = block.find(b"\n", max(start, m.end() - 1))
                if end == -1:
                    break
                pos = end + 1
        return sorted(starts)

    def _literal_lines(self, block: bytes, starts: set[int]) -> None:
        hits: list[tuple[int, int]] = []
        add = hits.append
        self.literals.scan(block, lambda idx, _s, end, _f, _c: add((end, idx)), scratch=self._scratch_space())  # type: ignore[union-attr]
        hits.sort()  # by end offset; a literal never spans a newline, so its end's line is its line
        direct, key_regexes = self._direct, self._key_regexes
        line_start, line_end, decided = -1, -1, False
        for end, idx in hits:
            if end > line_end:
                line_start = block.rfind(b"\n", 0, end) + 1
                line_end = block.find(b"\n", end)
                if line_end == -1:
                    line_end = len(block)
                decided = False
            if decided:
                continue
            if direct[idx] or (key_regexes[idx] and any(rx.search(block, line_start, line_end) for rx in self._raw(idx))):
                starts.add(line_start)
                decided = True

    def _raw(self, k: int) -> list[Any]:
        """The regexes keyed by literal ``k``, unanchored, as alternations (many regexes can share one
        literal: one pass over the line for all of them)."""
        rx = self._raw_rx.get(k)
        if rx is None:
            rx = self._raw_rx[k] = _alternations([unanchor(self.regexes[i - self.n_anchors]) for i in self._key_regexes[k]])
        return rx

    # ---- one clean line: which anchors and regexes match it -----------------------------------------
    def matches(self, text: str) -> list[int]:
        """The numbers of the anchors and regexes found in ``text``, ascending, case-insensitively: what
        one RE2 set of all of them would report, through the same literals."""
        found: set[int] = set()
        if self.literals is not None:
            keys: set[int] = set()
            self.literals.scan(text.encode(), lambda idx, _s, _e, _f, _c: keys.add(idx), scratch=self._scratch_space())
            for k in keys:
                found.update(self._key_anchors[k])
                if self._key_regexes[k]:
                    rx, numbers = self._clean(k)
                    found.update(numbers[j] for j in rx.Match(text) or ())
        if self._rest:
            if self._rest_set is None:
                self._rest_set = _set([p for _, p in self._rest])
            found.update(self._rest[j][0] for j in self._rest_set.Match(text) or ())
        return sorted(found)

    def _clean(self, k: int) -> tuple[Any, list[int]]:
        """An RE2 set of the regexes keyed by literal ``k``, as written, and their pattern numbers."""
        got = self._clean_rx.get(k)
        if got is None:
            numbers = self._key_regexes[k]
            got = self._clean_rx[k] = (_set([self.regexes[i - self.n_anchors] for i in numbers]), numbers)
        return got

    def _scratch_space(self) -> Any:
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = hyperscan.Scratch(self.literals)
        return scratch


_PICKLED = ("n_anchors", "regexes", "_direct", "_key_anchors", "_key_regexes", "_shard_patterns", "_rest", "_keys",
            "literals")


def unanchor(pattern: str) -> str:
    """Drop a leading ^ / trailing $ so an entry regex written for the clean line can still pick the raw
    line (which has prefixes) out of a long log; the clean line is then matched exactly."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1]
    return pattern


def _set(patterns: list[str]) -> Any:
    found = re2.Set.SearchSet(_options(False))
    for p in patterns:
        found.Add(p)
    found.Compile()
    return found


def _alternations(patterns: list[str]) -> list[Any]:
    """``patterns`` as RE2 alternations of at most :data:`SHARD_PATTERNS` each, for raw bytes."""
    return [
        re2.compile(("(?:" + ")|(?:".join(patterns[i : i + SHARD_PATTERNS]) + ")").encode(), _options(False))
        for i in range(0, len(patterns), SHARD_PATTERNS)
    ]


def _caseless_ascii(literal: str) -> bool:
    """Whether ASCII case folding finds every case variant RE2's Unicode folding would: true when the
    only letters with a case are ASCII (Japanese has none; an "É" would need RE2)."""
    return bool(literal) and all(c.isascii() or c.lower() == c.upper() for c in literal)


def _literal_database(keys: list[bytes]) -> Any:
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=["".join(f"\\x{b:02x}" for b in k).encode() for k in keys],  # every byte literal
        ids=list(range(len(keys))),
        flags=hyperscan.HS_FLAG_CASELESS,
        literal=False,
    )
    return db
