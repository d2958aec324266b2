"""Compressed attachments the log reader does not unpack itself: ``.xz`` and ``.bz2`` (one compressed
stream), and ``.zip`` (its files). ``.gz`` is unpacked as it is read (:mod:`tracebot.matcher.scan`).

Each is unpacked, with the standard library, into plain files under a temporary directory, which the
caller then reads as it reads a plain log. What it unpacks is bounded as a ``.gz`` is: at most
``max_bytes`` in all (counted as read, never trusting the sizes an archive declares: a bomb declares
small ones) and only until ``deadline``. A ``.zip``'s first ``MAX_MEMBERS`` files are read; an archive
inside one is not unpacked, and a name that points outside it (``../``, an absolute path) is refused.
Every file left out gets a note that says why. ``.zst`` is named and not read: the standard library has
no Zstandard before Python 3.14.
"""

from __future__ import annotations

import bz2
import lzma
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO

from tracebot.notes import note
from tracebot.sizes import size_text

STREAMS: dict[str, Callable[[Path], IO[bytes]]] = {".xz": lzma.LZMAFile, ".bz2": bz2.BZ2File}
ARCHIVES = (".zip", ".zst", *STREAMS)
NESTED = (".zip", ".zst", ".xz", ".bz2", ".gz", ".tgz", ".tar", ".7z", ".rar")
MAX_MEMBERS = 20
PIECE = 1 << 20


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVES)


@dataclass
class Unpacked:
    files: list[tuple[str, Path]] = field(default_factory=list)  # (the name a note gives it, where it is)
    notes: list[str] = field(default_factory=list)
    inflated: int = 0


def unpack(name: str, path: Path, into: Path, *, max_bytes: int, deadline: float) -> Unpacked:
    """``path`` (the attachment ``name``) unpacked into ``into``, within the bounds."""
    out = Unpacked()
    suffix = name.lower()[name.lower().rfind(".") :]
    if suffix == ".zst":
        out.notes.append(note("zst_not_read", file=name))
    elif suffix in STREAMS:
        with STREAMS[suffix](path) as src:
            _copy(src, into / "unpacked.log", name, suffix, max_bytes, deadline, out)
    else:
        _unzip(name, path, into, max_bytes, deadline, out)
    return out


def _unzip(name: str, path: Path, into: Path, max_bytes: int, deadline: float, out: Unpacked) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        out.notes.append(note("unreadable", file=name, error=f"not a zip file ({exc})"))
        return
    with archive:
        members = [i for i in archive.infolist() if not i.is_dir()]
        if len(members) > MAX_MEMBERS:
            out.notes.append(note("archive_many", file=name, n=len(members), max=MAX_MEMBERS))
        for i, info in enumerate(members[:MAX_MEMBERS]):
            shown = f"{name}/{info.filename}"
            if _outside(info.filename):
                out.notes.append(note("archive_outside", file=shown))
            elif info.filename.lower().endswith(NESTED):
                out.notes.append(note("archive_nested", file=shown))
            elif info.flag_bits & 0x1:
                out.notes.append(note("archive_encrypted", file=shown))
            elif out.inflated >= max_bytes or time.monotonic() >= deadline:
                out.notes.append(note("time_budget_spent", file=shown) if out.inflated < max_bytes else
                                 note("size_budget_spent", file=shown, size=size_text(max_bytes)))
            else:
                try:
                    src = archive.open(info)
                except (NotImplementedError, zipfile.BadZipFile, OSError) as exc:  # a method zipfile lacks
                    out.notes.append(note("unreadable", file=shown, error=f"{type(exc).__name__}: {str(exc)[:80]}"))
                    continue
                with src:
                    _copy(src, into / f"member-{i}.log", shown, ".zip", max_bytes, deadline, out)


def _outside(member: str) -> bool:
    """A name that would land outside the archive's folder if unpacked by it (``../x``, ``/etc/x``, ``C:\\x``)."""
    posix, windows = PurePosixPath(member), PureWindowsPath(member)
    return posix.is_absolute() or windows.is_absolute() or bool(windows.drive) or ".." in posix.parts or ".." in windows.parts


def _copy(src: IO[bytes], dest: Path, shown: str, kind: str, max_bytes: int, deadline: float, out: Unpacked) -> None:
    """Up to what is left of ``max_bytes`` of ``src`` into ``dest``, until ``deadline``. A file cut short
    (by a bound, or damaged part way) is read as far as it went, and its note says so."""
    room = max_bytes - out.inflated
    written = 0
    with dest.open("wb") as sink:
        try:
            while True:
                if time.monotonic() >= deadline:
                    out.notes.append(note("unpack_time_limit", file=shown, size=size_text(written)))
                    break
                piece = src.read(min(PIECE, room - written + 1))
                if not piece:
                    break
                if written + len(piece) > room:
                    sink.write(piece[: room - written])
                    written = room
                    out.notes.append(note("unpack_limit", file=shown, limit=size_text(max_bytes)))
                    break
                sink.write(piece)
                written += len(piece)
        except (OSError, EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile) as exc:
            out.notes.append(note("archive_damaged", file=shown, kind=kind, size=size_text(written), error=type(exc).__name__))
    out.inflated += written
    if written:
        out.files.append((shown, dest))
