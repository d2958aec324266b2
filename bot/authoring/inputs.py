"""The files an author hands the ``kb`` commands (a cases file and its log fixtures, a pasted error, a saved
thread), opened without waiting on something that is not a file.

``open()`` on a FIFO waits for a writer, saying nothing, and a directory or a device is read as an error
deep inside; so each is opened without blocking, checked to be a regular file, and read up to a bound.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotAFile(ValueError):
    """Why a path given as an input file cannot be read as one, in words (no errno in brackets)."""


def open_input(path: Path | str) -> BinaryIO:
    """The regular file ``path``, open for reading; :class:`NotAFile` says why not (a directory, a FIFO,
    socket or device, unreadable). A missing file raises ``FileNotFoundError``, which each command words its
    own way ("no such cases file")."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise NotAFile(exc.strerror or str(exc)) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return open(fd, "rb")  # noqa: SIM115 (returned open: the caller's with-block closes it)
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise NotAFile(os.strerror(errno.EISDIR))
    raise NotAFile("not a regular file (a FIFO, socket or device); give a file")


def read_input(path: Path | str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the regular file ``path`` (so the caller can tell it was longer); raises
    as :func:`open_input` does."""
    with open_input(path) as f:
        try:
            return f.read(limit + 1)
        except OSError as exc:
            raise NotAFile(exc.strerror or str(exc)) from None
