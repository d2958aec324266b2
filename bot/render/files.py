"""A result's attachments as files in one directory (``tracebot trace --out DIR``).

Attachment names come from plugins, and plugins carry job-controlled text (a job name, a py-spy file
name), so a name is used only when it is one plain, visible file name: never a path, ``.``/``..``, a
hidden file (``.bashrc``), a control or invisible character, a space at either end, a leading ``-``, or a
name another attachment of the same run already took. Anything else is saved under a name made here,
and the note says why; a symbolic link already in DIR is never followed.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from tracebot.result import Attachment

MAX_NAME_BYTES = 200  # below NAME_MAX (255) so "-2" before the suffix always fits
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}$")


@dataclass
class SavedAttachment:
    attachment: Attachment
    path: Path | None  # None: it could not be written (``note`` says why)
    note: str = ""  # why the plugin's name was not used, or why nothing was written


def name_problem(name: str) -> str:
    """Why ``name`` may not be used as a file name in DIR, or ``""`` when it may."""
    if not name:
        return "is empty"
    # C: controls, format characters (zero-width, bidi); not printable besides: Z's line and paragraph
    # separators and spaces other than ' ' (U+00A0, U+3000), which break a printed line or hide in it
    if any(unicodedata.category(c).startswith("C") or (not c.isprintable() and c != " ") for c in name):
        return "contains a control or invisible character"
    if name != name.strip(" "):
        return "begins or ends with a space"
    if name.startswith("-"):
        return "begins with '-' (a command run on the files in DIR would read it as an option)"
    if "/" in name or "\\" in name:
        return "contains a path separator ('/' or '\\')"
    if name in (".", ".."):
        return "is not a plain file name"
    if name.startswith("."):
        return "would be a hidden file"
    if len(os.fsencode(name)) > MAX_NAME_BYTES:
        return f"is too long ({len(os.fsencode(name))} bytes; at most {MAX_NAME_BYTES})"
    return ""


def shown(name: str) -> str:
    """The name quoted with every control character escaped, short enough for one line."""
    return repr(name[:60] + ("…" if len(name) > 60 else ""))


def write_attachments(attachments: list[Attachment], out_dir: Path) -> list[SavedAttachment]:
    """Each attachment written into ``out_dir`` (made if missing), or the reason it was not."""
    if not attachments:
        return []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = f"could not create the directory {out_dir}: {exc.strerror or exc}"
        return [SavedAttachment(a, None, f"attachment {n} {shown(a.filename)} was not written: {why}")
                for n, a in enumerate(attachments, 1)]
    taken: set[str] = set()
    saved = []
    for n, attachment in enumerate(attachments, 1):
        name, note = _choose_name(attachment, n, out_dir, taken)
        taken.add(name.casefold())  # a case-insensitive file system would make Ranks.png and ranks.png one file
        path = out_dir / name
        try:
            _write_new_or_regular(path, attachment.content)
        except OSError as exc:
            saved.append(SavedAttachment(attachment, None, f"attachment {n} {shown(attachment.filename)} was not "
                                                           f"written: {exc.strerror or exc}"))
            continue
        saved.append(SavedAttachment(attachment, path, note))
    return saved


def _choose_name(attachment: Attachment, n: int, out_dir: Path, taken: set[str]) -> tuple[str, str]:
    name = attachment.filename
    problem = name_problem(name)
    if not problem and name.casefold() in taken:
        problem = "was already written by this run"
    if not problem and _occupied(out_dir / name):
        problem = "is a symbolic link or not a regular file in the directory (not followed)"
    if not problem:
        return name, ""
    safe = name if name_problem(name) == "" else f"attachment-{n}{_suffix(attachment)}"
    stem, suffix = os.path.splitext(safe)
    i = 1
    while safe.casefold() in taken or _occupied(out_dir / safe) or safe == name:
        i += 1
        safe = f"{stem}-{i}{suffix}"
    return safe, f"attachment {n} {shown(name)} {problem}; saved as {safe}"


def _suffix(attachment: Attachment) -> str:
    """The name's own suffix when it is plain (``.png``), else one for its MIME type."""
    m = _SUFFIX.search(attachment.filename)
    if m and not name_problem(m.group()[1:]):
        return m.group().lower()
    return mimetypes.guess_extension(attachment.mimetype or "") or ".bin"


def _occupied(path: Path) -> bool:
    return path.is_symlink() or (path.exists() and not path.is_file())


def _write_new_or_regular(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` without following a symbolic link put there meanwhile, nor waiting
    on a named pipe (O_NONBLOCK: opening one with no reader fails instead of blocking forever) or writing
    into a device."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file (put there while tracebot was writing)")
    with os.fdopen(fd, "wb") as f:
        f.write(content)
