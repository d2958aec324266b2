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


def required_literal(pattern: str) -> str | None:
    """The longest ASCII literal every match of ``pattern`` contains, lower-cased, or None.

    Read with Python's regex parser (RE2's syntax is close to a subset of it); a pattern Python cannot
    read, or whose top level is an alternation, has none, and goes to the RE2 shards instead."""
    try:
        parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    literal_op = re._constants.LITERAL  # type: ignore[attr-defined]
    best, run = "", []
    for op, arg in list(parsed) + [(None, None)]:
        if op is literal_op and arg < 128:
            run.append(chr(arg))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    best = best.lower()
    return best if len(best) >= MIN_LITERAL and "\n" not in best else None


class CandidateStage:
    """Picks candidate lines out of blocks of log bytes; see the module's docstring.

    ``words``: literals that make any line a candidate (the error words); ``anchors``: entries' literal
    anchors; ``regexes``: entries' regexes, already unanchored."""

    def __init__(self, words: list[str], anchors: list[str], regexes: list[str]):
        direct: dict[bytes, None] = {}
        shard_patterns: list[str] = []
        for lit in [*words, *anchors]:
            if _caseless_ascii(lit):
                direct[lit.lower().encode()] = None
            elif lit:
                shard_patterns.append(re2.escape(lit))
        verify: dict[bytes, list[Any]] = {}
        for r in regexes:
            lit = required_literal(r)
            if lit is None:
                shard_patterns.append(r)
            else:
                verify.setdefault(lit.encode(), []).append(re2.compile(r.encode(), _options(False)))
        self.n_direct = len(direct)
        keys = list(direct) + [k for k in verify if k not in direct]
        # A literal that is also a direct one makes the line a candidate anyway: no need to verify.
        self.verify = [verify.get(k, []) for k in keys[self.n_direct :]]
        self.literals = _literal_database(keys) if keys else None
        self._scratch = threading.local()  # Hyperscan scratch space is per thread
        self.shards = [
            re2.compile(("(?:" + ")|(?:".join(shard_patterns[i : i + SHARD_PATTERNS]) + ")").encode(), _options(False))
            for i in range(0, len(shard_patterns), SHARD_PATTERNS)
        ]

    def line_starts(self, block: bytes) -> list[int]:
        """Offsets (sorted, distinct) of the starts of the candidate lines in ``block``."""
        starts: set[int] = set()
        if self.literals is not None:
            self._literal_lines(block, starts)
        for shard in self.shards:
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
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = hyperscan.Scratch(self.literals)
        hits: list[tuple[int, int]] = []
        add = hits.append
        self.literals.scan(block, lambda idx, _s, end, _f, _c: add((end, idx)), scratch=scratch)  # type: ignore[union-attr]
        hits.sort()  # by end offset; a literal never spans a newline, so its end's line is its line
        n_direct, verify = self.n_direct, self.verify
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
            if idx < n_direct or any(rx.search(block, line_start, line_end) for rx in verify[idx - n_direct]):
                starts.add(line_start)
                decided = True


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
