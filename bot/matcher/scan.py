"""Where lines come from: every line of a short text, or only candidate lines of a long log.

Long logs are read in chunks of bytes (never whole into memory); the candidate stage
(:mod:`tracebot.matcher.candidates`) finds the lines worth scoring, so a 20 MB log costs one linear scan
plus work proportional to its error lines.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Self

from tracebot.matcher.encodings import SNIFF_BYTES, UTF8, decode_line, sniff_encoding
from tracebot.matcher.normalize import as_shown
from tracebot.notes import note
from tracebot.sizes import size_text

CHUNK_BYTES = 4 << 20
MAX_LINE_BYTES = 16 << 10  # longer "lines" (minified JSON, binary junk) are cut to this for scoring
GZIP_MAGIC = b"\x1f\x8b"
DEADLINE_EVERY = 32  # candidate lines between two looks at the clock inside a block
MAX_INFLATED = 256 << 20  # what a gzipped log may unpack to when the caller sets no limit of its own
NOT_TEXT = note("not_text")
BINARY_SEEN = note("binary_seen")  # every line read still
INFLATE_PIECE = 1 << 20  # the deadline and the inflate limit are checked after every piece this large

Progress = Callable[[int, int], None]  # (bytes done, bytes total or 0 when unknown)


@dataclass
class ScanStats:
    bytes_read: int = 0
    lines_total: int = 0
    truncated: bool = False
    binary: bool = False
    notes: list[str] = field(default_factory=list)


def text_lines(text: str, stats: ScanStats) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line of ``text``, as a terminal showed it (:func:`as_shown`: the
    line a reply quotes has no colour codes). Lines are counted as a log viewer, an editor
    and the streamed reader count them, by newline only: a progress bar's carriage returns, a form feed
    or a Unicode line separator inside a line do not start new lines (``str.splitlines`` would, and
    every line number after them would be off). A text with carriage returns and no newline at all is
    an old-style text file: its lines are split at the carriage returns."""
    if "\n" in text:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
    else:
        lines = text.splitlines()
    stats.lines_total = len(lines)
    stats.bytes_read = len(text)
    for no, line in enumerate(lines, 1):
        yield no, as_shown(line[:MAX_LINE_BYTES].removesuffix("\r"))


class _Over:
    """A binary stream over another (``inner``): seeking and closing reach it, and it is a context manager."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.inner.seek(offset, whence)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoundedInflate(_Over):
    """A gunzipping stream that ends early: once ``max_bytes`` have come out of it, or once ``deadline``
    (``time.monotonic()``) has passed, checked every :data:`INFLATE_PIECE` inflated bytes, so a gzip bomb
    (megabytes of zeros inflating to gigabytes) costs a bounded amount of time and work. ``stopped``
    says why it ended early ("" when it reached the real end)."""

    def __init__(
        self,
        inner: BinaryIO,
        max_bytes: int | None = None,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        raw: BinaryIO | None = None,
    ) -> None:
        super().__init__(inner)
        self.raw = raw  # the file under the gzip stream: GzipFile leaves a file it was handed open
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.clock = clock
        self.inflated = 0
        self.stopped = ""

    def read(self, n: int = -1) -> bytes:
        pieces: list[bytes] = []
        want = n if n >= 0 else float("inf")
        while want > 0 and not self.stopped:
            if self.deadline is not None and self.clock() > self.deadline:
                self.stopped = note("unpack_time_limit", size=size_text(self.inflated))
                break
            room = INFLATE_PIECE if self.max_bytes is None else min(INFLATE_PIECE, self.max_bytes - self.inflated)
            if room <= 0:
                self.stopped = note("unpack_limit", limit=size_text(self.max_bytes))
                break
            piece = self._piece(int(min(want, room)))
            if not piece:
                break
            pieces.append(piece)
            self.inflated += len(piece)
            want -= len(piece)
        return b"".join(pieces)

    def _piece(self, n: int) -> bytes:
        """Up to ``n`` inflated bytes; a gzip cut short or damaged (EOFError, zlib.error: not OSErrors) ends
        the stream after the bytes that came out before the damage, and ``stopped`` says so. ``read1``:
        a plain ``read`` of a piece would lose the whole piece to an error at its end."""
        read1 = getattr(self.inner, "read1", self.inner.read)
        parts: list[bytes] = []
        got = 0
        while got < n:
            try:
                part = read1(n - got)
            except (OSError, EOFError, zlib.error) as exc:
                self.stopped = note("gzip_damaged", size=size_text(self.inflated + got), error=exc)
                break
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.inflated, self.stopped = 0, ""
        return super().seek(offset, whence)

    def close(self) -> None:
        super().close()
        if self.raw is not None:
            self.raw.close()


class FirstBytes(_Over):
    """The first ``size`` bytes of a seekable stream: a log as it was when it was opened. A job still
    writing appends while the log is read; what it appends is left for the next read, whatever the
    log's encoding (a recoded or unpacked stream has no byte count of its own to stop at)."""

    def __init__(self, inner: BinaryIO, size: int) -> None:
        super().__init__(inner)
        self.size = size

    def read(self, n: int = -1) -> bytes:
        room = self.size - self.inner.tell()
        if room <= 0:
            return b""
        return self.inner.read(room if n < 0 else min(n, room))

    def tell(self) -> int:
        return self.inner.tell()

    def fileno(self) -> int:
        return self.inner.fileno()


def open_log(
    path: Path, *, max_inflated: int | None = None, deadline: float | None = None
) -> tuple[BinaryIO, int]:
    """Open a log as UTF-8 bytes (see :func:`log_stream`), as far as it reached when it was opened (a
    growing log: :class:`FirstBytes`); returns (stream, size on disk)."""
    raw = path.open("rb")
    try:
        size = os.fstat(raw.fileno()).st_size
        first = FirstBytes(raw, size)
        return log_stream(first, max_inflated=max_inflated, deadline=deadline), size  # type: ignore[arg-type]
    except BaseException:
        raw.close()
        raise


def log_stream(raw: BinaryIO, *, max_inflated: int | None = None, deadline: float | None = None) -> BinaryIO:
    """``raw`` (a seekable stream at its start) as the UTF-8 bytes the readers expect: gunzipped when it is
    gzip (at most ``max_inflated`` bytes, until ``deadline``: :class:`BoundedInflate`), and recoded as it
    is read when its head is UTF-16 or Latin-1 (:func:`~tracebot.matcher.encodings.sniff_encoding`; read as
    bytes, UTF-16's every other byte is a NUL and no line matches, and Latin-1's accents are refused as
    binary). Closing the result closes ``raw``."""
    stream = raw
    if raw.read(2) == GZIP_MAGIC:
        stream = BoundedInflate(gzip.GzipFile(fileobj=raw), max_inflated, deadline, raw=raw)  # type: ignore[assignment]
    raw.seek(0)
    encoding = sniff_encoding(stream.read(SNIFF_BYTES))
    stream.seek(0)
    if encoding == UTF8:
        return stream
    return codecs.EncodedFile(stream, UTF8, encoding, errors="replace")  # type: ignore[return-value]


def looks_like_text(head: bytes) -> bool:
    """The first bytes of a file read as text: few bytes that are not UTF-8 besides NULs.

    Not counting NULs is deliberate: the NUL test alone let random or compressed bytes through (about
    0.4 % NULs, under the scanner's 1 %), while a log a node's crash left padded with NULs (its page
    cache lost) still holds its error, and the scanner reads past NUL runs. Compressed, random and
    executable bytes are mostly not UTF-8. A head that is UTF-16 or Latin-1 text is text."""
    if sniff_encoding(head) != UTF8:
        return True
    text = head.replace(b"\x00", b"")
    undecodable = text.decode("utf-8", errors="replace").count("\ufffd")
    return undecodable <= len(text) // 10 + 3  # +3: a character cut at the end of the sniff


def file_is_text(path: Path, *, max_inflated: int | None = None) -> bool:
    """The file's first ``SNIFF_BYTES`` (unpacked, for gzip) look like text: a log, not a core dump, an
    archive or an image, whose byte noise would read as error lines."""
    stream, _ = open_log(path, max_inflated=max_inflated)
    with stream:
        return looks_like_text(stream.read(SNIFF_BYTES))


BLANK_SNIFF = 64 << 10  # a file this small is read to see whether it is blank; a larger one is a log


def file_is_blank(path: Path) -> bool:
    """``path`` holds nothing but blank space (read only when small; plain, gzip, UTF-16 alike): the
    matcher, asked about it, would list its closest entries to nothing at all. A file that cannot be read
    is not called blank: its reading says what went wrong."""
    if path.stat().st_size > BLANK_SNIFF:
        return False
    try:
        stream, _size = open_log(path, max_inflated=BLANK_SNIFF + 1)
        with stream:
            data = stream.read(BLANK_SNIFF + 1)
    except (OSError, EOFError, zlib.error):
        return False
    return len(data) <= BLANK_SNIFF and not data.decode("utf-8", "replace").replace("\ufeff", "").strip()


def candidate_lines(
    stream: BinaryIO,
    trigger: Any,
    stats: ScanStats,
    *,
    size_hint: int = 0,
    max_bytes: int = 8 << 30,
    deadline: float | None = None,
    progress: Progress | None = None,
) -> Iterator[tuple[int, str]]:
    """Yield (line number, decoded line) for each line of ``stream`` that ``trigger`` (a
    :class:`~tracebot.matcher.candidates.CandidateStage`) picks. ``deadline`` is honoured inside a block
    as well as between blocks (the consumer's time spent on each line counts)."""
    carry = b""
    lines_before = 0  # newlines in everything before the current block
    open_line = False  # the last block was cut inside a line (one longer than a block): not counted yet
    done = False
    while not done:
        try:
            data = stream.read(CHUNK_BYTES)
        except (OSError, EOFError) as exc:  # truncated gzip, I/O error: keep what was read
            stats.notes.append(note("read_error", size=size_text(stats.bytes_read), error=exc))
            stats.truncated = True
            data = b""
        stats.bytes_read += len(data)
        if not data:
            block, carry, done = carry, b"", True
        else:
            buf = carry + data
            cut = buf.rfind(b"\n")
            if cut == -1 and len(buf) < MAX_LINE_BYTES * 4:
                carry = buf
                continue
            cut = len(buf) - 1 if cut == -1 else cut
            block, carry = buf[: cut + 1], buf[cut + 1 :]
        # find() first: most logs have no NUL at all, and finding none is much cheaper than counting.
        if not stats.binary and block.find(b"\x00") != -1 and block.count(b"\x00") > len(block) // 100 + 1:
            stats.binary = True
            stats.notes.append(BINARY_SEEN)
        counted_pos, counted_lines = 0, lines_before
        for k, line_start in enumerate(trigger.line_starts(block)):
            if deadline is not None and k % DEADLINE_EVERY == DEADLINE_EVERY - 1 and time.monotonic() > deadline:
                # Checked inside the block too: scoring a block's candidates can take longer than reading it.
                stats.lines_total = counted_lines + block.count(b"\n", counted_pos, line_start)
                _time_limit(stats)
                return
            line_end = block.find(b"\n", line_start)
            if line_end == -1:
                line_end = len(block)
            counted_lines += block.count(b"\n", counted_pos, line_start)
            counted_pos = line_start
            raw = block[line_start : min(line_end, line_start + MAX_LINE_BYTES)]
            yield counted_lines + 1, as_shown(decode_line(raw))
        lines_before = counted_lines + block.count(b"\n", counted_pos)  # each newline is counted once
        if block:
            # A line the block was cut inside goes on in the next one: it is counted once, at its newline
            # or at the end of the log (counting it at each cut shifted every later line number).
            open_line = not block.endswith(b"\n")
        if progress:
            progress(stats.bytes_read, size_hint)
        if stats.bytes_read >= max_bytes and not done:
            stats.truncated = True
            stats.notes.append(note("read_limit", size=size_text(stats.bytes_read)))
            break
        if deadline is not None and time.monotonic() > deadline and not done:
            stats.lines_total = lines_before + open_line
            _time_limit(stats)
            return
    stats.lines_total = lines_before + open_line


def _time_limit(stats: ScanStats) -> None:
    stats.truncated = True
    stats.notes.append(note("time_limit", size=size_text(stats.bytes_read)))


def bytes_stream(data: bytes, *, max_inflated: int | None = None) -> BinaryIO:
    """``data`` (a whole paste or attachment) as :func:`log_stream` reads a file; gzip unpacks to at most
    ``max_inflated`` bytes (:data:`MAX_INFLATED` when not given), and ``stopped`` says where it was cut."""
    return log_stream(io.BytesIO(data), max_inflated=MAX_INFLATED if max_inflated is None else max_inflated)
