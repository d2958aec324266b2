"""Find the first errors in a job's log, in bounded time and memory, whatever its size.

The file is streamed whole, in blocks (:func:`tracebot.matcher.scan.candidate_lines`, the matcher's own
reader): never held in memory, never followed into FIFOs or devices, never sampled — an error in the
middle of a 2 GB log is found, with its true line number. Candidate lines (what the matcher's candidate
stage selects) are kept, with their line numbers, for the matcher; lines that read like errors are
reported as "first errors", with the rank and host their prefixes name. Only the time budget stops the
scan early, and the notes then say how far it got.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from tracebot.matcher.candidates import CandidateStage
from tracebot.matcher.index import ERROR_WORD_LIST
from tracebot.matcher.normalize import clean
from tracebot.matcher.scan import MAX_INFLATED, FirstBytes, ScanStats, candidate_lines, log_stream
from tracebot.sizes import size_text

MAX_CANDIDATES = 4000
MAX_EXCERPT_CHARS = 4 << 20
MAX_ERROR_LINES = 200
MAX_RANKS = 4096

# Stricter than the matcher's trigger: these are lines a person would call an error. An exception's dotted
# name is read 120 characters at most: a word starts after every "." of a run, and an unbounded name read
# the rest of the run again from each, so a job's 16 KB line "A.A.A.… error" took 3 s (quadratic).
ERROR_LINE = re.compile(
    r"\b[A-Z][A-Za-z0-9_.]{0,120}(?:Error|Exception|Interrupt)\b|Traceback \(most recent call last\)"
    r"|(?i:\berror\b|\bexception\b|\bfatal\b|segmentation fault|core dumped|out of memory|\boom[-_ ]?kill"
    r"|nccl warn|watchdog caught|\bkilled\b|cancelled at|due to time limit|\bterminate called\b)"
    r"|エラー|例外"
)
# Without a knowledge base, the matcher's error words select lines.
FALLBACK_TRIGGER = CandidateStage(ERROR_WORD_LIST, [], [])


@dataclass
class ErrorLine:
    line_no: int | None  # 1-based
    text: str
    rank: str | None = None
    host: str | None = None
    message: str = ""  # the text without its timestamp / rank / host prefixes

    @property
    def starts_traceback(self) -> bool:
        """A traceback's header line: says only that an exception follows (its last line says which)."""
        return (self.message or self.text).startswith("Traceback (most recent")


@dataclass
class LogScan:
    path: str
    size: int = 0
    errors: list[ErrorLine] = field(default_factory=list)  # in file order, first MAX_ERROR_LINES
    first_by_rank: dict[str, ErrorLine] = field(default_factory=dict)
    candidates: list[tuple[int | None, str]] = field(default_factory=list)  # for the matcher
    bytes_read: int = 0
    lines_total: int | None = None
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    unreadable: str | None = None

    def excerpt(self) -> tuple[str, list[int | None]]:
        """The candidate lines as one text, and the file line number of each of its lines."""
        return "\n".join(text for _, text in self.candidates), [no for no, _ in self.candidates]


# Kernel views, not logs: /proc/<pid>/environ holds other processes' secrets (tracebot's own too).
NEVER_READ = (Path("/proc"), Path("/sys"), Path("/dev"))


class NotALog(OSError):
    """A path that is never read as a log (under /proc, /sys or /dev, or not a regular file)."""


def open_regular(path: Path) -> BinaryIO:
    """Open for reading without blocking on a FIFO, never following a symlink in the last component and
    never under /proc, /sys or /dev (whatever links lead there)."""
    _refuse_kernel_view(Path(os.path.realpath(path)))
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:  # a directory swapped for a link between the check and the open: what was opened counts
        _refuse_kernel_view(Path(os.readlink(f"/proc/self/fd/{fd}")))
    except NotALog:
        os.close(fd)
        raise
    except OSError:
        pass  # no /proc here: the check before the open stands
    return regular_stream(fd)


def _refuse_kernel_view(real: Path) -> None:
    if any(real == top or top in real.parents for top in NEVER_READ):
        raise NotALog(f"{real} is under /{real.parts[1]}: tracebot never reads /proc, /sys or /dev as a log")


def regular_stream(fd: int) -> BinaryIO:
    """A blocking binary stream of ``fd`` if it is a regular file (closed and refused otherwise)."""
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            raise IsADirectoryError(f"{kind}; only regular files are read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def describe_os_error(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "the file does not exist (deleted, never written, or on a file system this host cannot see)"
    if isinstance(exc, PermissionError):
        return "permission denied: tracebot's user may not read it"
    return str(exc.strerror or exc) if not isinstance(exc, IsADirectoryError) else str(exc)


def scan_log(path: Path, trigger: Any = None, budget_s: float = 20.0,
             opener: Callable[[Path], BinaryIO] = open_regular) -> LogScan:
    """Scan ``path`` whole, within ``budget_s``; never raises for an unreadable file
    (``LogScan.unreadable`` says why).

    ``opener`` opens it: by default :func:`open_regular` with this process's rights; a caller that must
    read with someone else's (fewer) rights passes its own."""
    trigger = trigger or FALLBACK_TRIGGER
    result = LogScan(str(path))
    start = time.monotonic()
    try:
        stream = opener(path)
    except OSError as exc:
        result.unreadable = describe_os_error(exc)
        return result
    with stream:
        result.size = os.fstat(stream.fileno()).st_size
        # What a still-running job appends after the open is left for the next scan, in every encoding.
        first = FirstBytes(stream, result.size)
        try:
            text = log_stream(first, max_inflated=MAX_INFLATED, deadline=start + budget_s)  # type: ignore[arg-type]
        except OSError as exc:
            result.unreadable = describe_os_error(exc)
            return result
        # A gzipped or recoded log gives more (or fewer) bytes than the file holds.
        expanded = text is not first
        _collect(result, _lines(text, trigger, result, start + budget_s, expanded=expanded))
        stopped = getattr(text, "stopped", "")
        if stopped and not (result.truncated and "time limit" in stopped):  # the time limit is said once
            result.truncated = True
            result.notes.append(stopped)
    return result


def _lines(stream: BinaryIO, trigger: Any, result: LogScan, deadline: float,
           expanded: bool = False) -> Iterator[tuple[int, str]]:
    stats = ScanStats()
    yield from candidate_lines(stream, trigger, stats, deadline=deadline)
    result.bytes_read += stats.bytes_read
    result.lines_total = stats.lines_total
    if stats.truncated and any("time limit" in n for n in stats.notes):
        result.truncated = True
        # bytes read out of a gzipped or recoded log do not compare with the file's size on disk
        of = " unpacked or recoded" if expanded else f" of {size_text(result.size)}"
        result.notes.append(f"stopped reading at the time limit after {size_text(result.bytes_read)}{of}; "
                            "errors after that point are not reported")
    result.notes.extend(n for n in stats.notes if "time limit" not in n and "limit)" not in n)


def _collect(result: LogScan, lines: Iterator[tuple[int, str]]) -> None:
    excerpt_chars = 0
    for line_no, text in lines:
        if len(result.candidates) < MAX_CANDIDATES and excerpt_chars < MAX_EXCERPT_CHARS:
            result.candidates.append((line_no, text))
            excerpt_chars += len(text) + 1
        if not ERROR_LINE.search(text):
            continue
        cleaned = clean(text)
        error = ErrorLine(line_no, text.strip()[:500], cleaned.rank, cleaned.host, cleaned.text[:500])
        if len(result.errors) < MAX_ERROR_LINES:
            result.errors.append(error)
        key = cleaned.rank if cleaned.rank is not None else "?"
        if key not in result.first_by_rank and len(result.first_by_rank) < MAX_RANKS:
            result.first_by_rank[key] = error
