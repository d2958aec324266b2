"""The part of an attached log a draft needs, read streamed: a window around its error lines.

A draft keeps a window of its paste (:func:`tracebot.authoring.draft.trim_snippet`: the chosen error
lines with their context, at most ``MAX_EXAMPLE_CHARS // 4`` characters). For an attached log of up to
``max_file_bytes`` that window is found without holding the log in memory: one streamed pass collects
the best distinct error lines (the matcher's candidate reader, ``scan_log``'s idea of an error line and the
draft's line score), the
draft's signature lines are chosen among them, and a second pass keeps only the lines around them and
stops reading there. gzip is unpacked on the fly within the same limits as a diagnosed attachment.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from pathlib import Path

from tracebot.authoring.draft import CONTEXT_LINES, pick_signatures
from tracebot.knowledge.entry import MAX_EXAMPLE_CHARS
from tracebot.matcher.logscan import ERROR_LINE, FALLBACK_TRIGGER
from tracebot.matcher.normalize import clean, mask
from tracebot.matcher.scan import NOT_TEXT, ScanStats, candidate_lines, file_is_text, open_log
from tracebot.matcher.signals import line_score

WINDOW_CHARS = MAX_EXAMPLE_CHARS // 4
MAX_ERROR_LINES = 200  # distinct error lines the signatures are chosen from (the best by line score)


class NotText(ValueError):
    """The file is not a text log (NUL bytes or mostly undecodable bytes at its start)."""


def error_window(path: Path, *, max_inflated: int | None = None, deadline: float | None = None) -> str:
    """The lines around the log's most distinctive error lines ("" when it has no error line).

    Raises :class:`NotText` for a binary file and :class:`OSError` when it cannot be read."""
    _check_text(path, max_inflated)
    errors = _error_lines(path, max_inflated, deadline)
    if not errors:
        return ""
    chosen = pick_signatures("\n".join(text for _, text in errors))
    if not chosen:
        return ""
    numbers = [errors[s.line_no - 1][0] for s in chosen]
    first = max(1, min(numbers) - CONTEXT_LINES)
    last = max(numbers) + CONTEXT_LINES
    kept: list[str] = []
    size = 0
    for no, line in _numbered(path, _LinesBetween(first, last), max_inflated, deadline):
        kept.append(line.removesuffix("\r"))
        size += len(line) + 1
        if size >= WINDOW_CHARS or no >= last:
            break  # the rest of the log is never read
    return "\n".join(kept)[:WINDOW_CHARS]


def _check_text(path: Path, max_inflated: int | None) -> None:
    if not file_is_text(path, max_inflated=max_inflated):
        raise NotText(NOT_TEXT)


def _error_lines(path: Path, max_inflated: int | None, deadline: float | None) -> list[tuple[int, str]]:
    """``(line number, line)`` of the distinct error lines pick_signatures would rank first (the best
    ``MAX_ERROR_LINES`` by line score, the earlier of equals, as it ranks them), in log order, each one line.

    The whole log is read: the crash at its end outranks hundreds of warnings saying "error" before it."""
    kept: dict[str, tuple[int, int, str, str]] = {}  # masked line -> its heap entry
    heap: list[tuple[int, int, str, str]] = []  # (score, -line number, key, line): the weakest on top
    for no, text in _numbered(path, FALLBACK_TRIGGER, max_inflated, deadline):
        line = " ".join(text.splitlines())  # \r, \f, U+2028 inside a line must not make two
        cleaned = clean(line).text
        score = line_score(cleaned)
        # the draft's own scoring as well: "ncclInternalError: …", "报错AssertionError: …" have no error word
        if not score and not ERROR_LINE.search(text):
            continue
        key = mask(cleaned)
        if key in kept:
            continue  # an earlier copy is kept; a copy dropped before ranks lower than every kept line
        entry = (score, -no, key, line)
        if len(heap) < MAX_ERROR_LINES:
            heapq.heappush(heap, entry)
        elif entry[:2] > heap[0][:2]:
            del kept[heapq.heapreplace(heap, entry)[2]]
        else:
            continue
        kept[key] = entry
    return sorted((-minus_no, line) for _, minus_no, _, line in heap)


def _numbered(path: Path, trigger: object, max_inflated: int | None,
              deadline: float | None) -> Iterator[tuple[int, str]]:
    stream, size = open_log(path, max_inflated=max_inflated, deadline=deadline)
    with stream:
        yield from candidate_lines(stream, trigger, ScanStats(), size_hint=size, deadline=deadline)


class _LinesBetween:
    """A trigger for :func:`candidate_lines` that picks lines ``first``..``last`` (1-based), counting
    lines as the reader does; blocks before them are only counted, not split."""

    def __init__(self, first: int, last: int) -> None:
        self.first, self.last = first, last
        self.before = 0  # lines in the blocks seen so far

    def line_starts(self, block: bytes) -> list[int]:
        start_no = self.before + 1
        self.before += block.count(b"\n") + (1 if block and not block.endswith(b"\n") else 0)
        if self.before < self.first or start_no > self.last:
            return []
        starts: list[int] = []
        pos, no = 0, start_no
        while pos < len(block) and no <= self.last:
            if no >= self.first:
                starts.append(pos)
            newline = block.find(b"\n", pos)
            if newline == -1:
                break
            pos, no = newline + 1, no + 1
        return starts
