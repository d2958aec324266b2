"""Folders tracebot makes for what only its user should read: the cache (unpickled) and the database."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

PRIVATE = 0o700


def make_private(folder: Path) -> None:
    """Make ``folder`` and every missing folder above it with mode 0700 (this user alone). ``Path.mkdir``
    gives the parents it makes the umask's mode: ``~/.cache`` came out 0777 under umask 000, so anyone could
    rename tracebot's folder in it away and put another in its place. A folder already there is left as its
    owner set it, and so is a file in the way of ``folder`` itself (the caller checks what it got); one in
    the way of a parent raises ``NotADirectoryError``."""
    if folder.is_dir():
        return
    if folder.parent != folder:
        make_private(folder.parent)
    with suppress(FileExistsError):  # made meanwhile by another process, or something else is there
        folder.mkdir(mode=PRIVATE)
