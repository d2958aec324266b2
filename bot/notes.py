"""The notes an answer carries about what was not read, or not all of it ("train.log: skipped, larger than
16 MB"), made from one table of forms so that a renderer can say each in the thread's language.

A note stays plain English text wherever it travels (a diagnosis's ``notes``, the audit log, ``--json``):
:func:`note` makes it from a form of :data:`FORMS`, and :func:`read_note` gives back the form's key, its
values and the file it is about, for :func:`tracebot.render.messages.say_note`, which has a form of every
key in each language it answers in (a test holds that).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

FORMS: dict[str, str] = {
    # reading a log (tracebot.matcher.scan)
    "binary_seen": "binary content found; only text-like lines were read",
    "not_text": "not a text file (binary content); attach the log as text or .gz",
    "read_error": "stopped reading after {size}: {error}",
    "read_limit": "read the first {size} only (limit)",
    "time_limit": "time limit reached after {size}; the rest was not read",
    "unpack_time_limit": "time limit reached after {size} unpacked; the rest was not read",
    "unpack_limit": "unpacks to more than {limit}; only the first {limit} were read",
    "gzip_damaged": "the gzip data is damaged or cut short after {size} unpacked ({error}); the rest was not read",
    # why a text got no unprompted answer (tracebot.matcher.core)
    "thanks": "reads as a thank-you / resolved report: nothing posted unprompted",
    "change": "reads as a change (a pull request, a commit, a review): nothing posted unprompted",
    # a message's attachments (tracebot.service.attachments)
    "not_a_log": "skipped, not a text or log file",
    "skipped_not_text": "skipped, not a text file (binary content); attach the log as text or .gz",
    "too_large": "skipped, larger than {size}",
    "time_budget_spent": "skipped, the earlier files used this message's time budget",
    "size_budget_spent": "skipped, the earlier files used this message's {size} budget",
    "unreadable": "could not be read ({error})",
    "empty": "empty or blank: there is nothing in it to read (was the log still being written?)",
    # compressed attachments (tracebot.service.archives)
    "zst_not_read": "skipped, Zstandard (.zst) is not unpacked; attach the log as text, .gz, .xz, .bz2 or .zip",
    "archive_damaged": "the {kind} data is damaged or cut short after {size} unpacked ({error}); the rest was not read",
    "archive_many": "holds {n} files; only the first {max} were read",
    "archive_nested": "skipped, an archive inside an archive is not unpacked",
    "archive_outside": "skipped, its name points outside the archive",
    "archive_encrypted": "skipped, encrypted",
}


@dataclass(frozen=True)
class ReadNote:
    key: str
    values: dict[str, str]
    file: str | None = None  # the attachment the note is about ("train.log: …")


def note(key: str, *, file: str | None = None, **values: object) -> str:
    """The note ``key`` with ``values`` filled in, after ``file``'s name when it is about one file."""
    text = FORMS[key].format(**values)
    return f"{file}: {text}" if file is not None else text


def _pattern(form: str) -> re.Pattern[str]:
    """``form`` as a regex: each ``{name}`` captures its value (a name used twice must repeat it)."""
    out, seen = [], set()
    for literal, name, _spec, _conv in string.Formatter().parse(form):
        out.append(re.escape(literal))
        if name:
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
    return re.compile(r"(?:(?P<file>.+?): )??" + "".join(out), re.DOTALL)


# The form with the most fixed words first: "time limit reached after {size} unpacked; …" also reads as
# "time limit reached after {size}; …" with " unpacked" in the size.
_PATTERNS = {key: _pattern(FORMS[key]) for key in sorted(FORMS, key=lambda k: -len(re.sub(r"\{\w+\}", "", FORMS[k])))}


def read_note(text: str) -> ReadNote | None:
    """The form ``text`` was made from, with its values; None for a note made otherwise."""
    for key, pattern in _PATTERNS.items():
        m = pattern.fullmatch(text)
        if m:
            values = {k: v for k, v in m.groupdict().items() if k != "file"}
            return ReadNote(key, values, m.group("file"))
    return None
