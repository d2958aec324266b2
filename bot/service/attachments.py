"""Diagnosing one message: its text and the text or log files attached to it, as one ranked Diagnosis."""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tracebot.config import Config
from tracebot.markup import plain_text
from tracebot.matcher import Matcher, combine
from tracebot.matcher.ranking import in_language
from tracebot.matcher.scan import BINARY_SEEN, file_is_blank, file_is_text
from tracebot.notes import note
from tracebot.result import Diagnosis
from tracebot.service.archives import Unpacked, is_archive, unpack
from tracebot.service.inbound import FileRef, Inbound
from tracebot.service.outbox import DownloadRefused, DownloadTooLarge, Outbox
from tracebot.sizes import size_text

log = logging.getLogger(__name__)

_TEXT_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".json", ".yaml", ".yml", ".py", ".trace")
_TEXT_FILETYPES = {"text", "log", "plain", "python", "shell", "json", "yaml", "gzip", "csv", "markdown"}


NOT_A_LOG = note("not_a_log")


def is_text_file(f: FileRef) -> bool:
    if f.mimetype.startswith(("image/", "video/", "audio/")):
        return False
    return (
        f.mimetype.startswith("text/")
        or f.mimetype in ("application/gzip", "application/x-gzip", "application/json")
        or f.filetype in _TEXT_FILETYPES
        or f.name.lower().endswith(_TEXT_SUFFIXES)
    )


def is_readable(f: FileRef) -> bool:
    """A file tracebot reads logs from: text (plain or ``.gz``, unpacked as it is read) or an archive."""
    return is_archive(f.name) or is_text_file(f)


def download_name(f: FileRef) -> str:
    """The name an attachment is downloaded under: what :func:`logs_in` and the log reader tell it by."""
    name = f.name.lower()
    return "upload.gz" if name.endswith(".gz") else "upload.bin" if is_archive(name) else "upload.log"


def logs_in(name: str, path: Path, into: Path, *, max_bytes: int, deadline: float) -> Unpacked:
    """The logs a downloaded attachment ``name`` holds: itself (plain or ``.gz``), or what its archive
    (``.xz``, ``.bz2``, ``.zip``) unpacks to in ``into``, with notes on what was left out. Answers and
    Save as knowledge read attachments through this one door."""
    if not is_archive(name):
        return Unpacked(files=[(name, path)])
    return unpack(name, path, into, max_bytes=max_bytes, deadline=deadline)


@dataclass
class FileLimits:
    """How much of a message's files is read: each file's download and unpacked size, the unpacked bytes
    of all its files together, and the time for all of them. A message holds one worker at most
    ``budget_s``, however its attachments were built."""

    max_file_bytes: int = 50 << 20
    max_inflated_bytes: int = 256 << 20
    max_message_inflated_bytes: int = 512 << 20
    budget_s: float = 60.0

    @classmethod
    def from_config(cls, config: Config) -> FileLimits:
        return cls(
            max_file_bytes=config.max_file_bytes,
            max_inflated_bytes=config.max_inflated_bytes,
            max_message_inflated_bytes=config.max_message_inflated_bytes,
            budget_s=config.message_budget_s,
        )


# Text tracebot reads when it is attached, but that is data or code, not a log: a metrics table, a
# notebook, a config, a script, an archive. Shared unprompted, nothing went wrong in it. Told by the
# name, not Slack's filetype: a traceback pasted as a Python or shell snippet is a log ("Untitled").
_NOT_LOG_SUFFIXES = (".json", ".yaml", ".yml", ".py", ".sh", ".csv", ".tsv", ".md", ".ipynb", ".tar", ".tgz", ".zip")


def is_log_file(f: FileRef) -> bool:
    """A text file (or one compressed alone: ``.gz``, ``.xz``, ``.bz2``, ``.zst``) whose name does not say it
    is a table, notebook, config, script or archive (``train.log``, ``slurm-4411.out.gz``, a pasted snippet)."""
    name = f.name.lower()
    for packed in (".gz", ".xz", ".bz2", ".zst"):
        name = name.removesuffix(packed)
    return (is_text_file(f) or is_archive(f.name)) and not name.endswith(_NOT_LOG_SUFFIXES)


def about_logs(msg: Inbound, notes: list[str]) -> list[str]:
    """The notes that say an attached log was not read, or not all of it (too large, not text, cut short):
    not those about an image, a table, an archive or another file that is no log, nor those about the
    message's text, nor the scanner's word that it read past binary runs (a crash's NUL padding: every
    line was read, and "could not read all of the attached log" would be untrue)."""
    names = tuple(f"{f.name}: " for f in msg.files if is_log_file(f))
    return [n for n in notes if n.startswith(names) and not n.endswith((NOT_A_LOG, BINARY_SEEN))] if names else []


def located(outbox: Outbox, msg: Inbound) -> Inbound:
    """``msg`` with each file Slack sent by its id alone (shared from another organisation through Slack
    Connect) looked up by that id: its name, type, size and URL. Read without them, a log shared that way
    was passed over as "not a text or log file", or in silence. A file Slack will not describe keeps
    why, for its note."""
    if all(f.url or not f.id for f in msg.files):
        return msg
    files = []
    for f in msg.files:
        if f.url or not f.id:
            files.append(f)
            continue
        try:
            files.append(outbox.file_info(f.id))
        except Exception as exc:  # a timeout as much as a refusal: the message's text is still answered
            log.warning("could not look up file %s: %s", f.id, exc)
            why = str(exc) if isinstance(exc, DownloadRefused) else f"Slack did not answer: {type(exc).__name__}"
            files.append(dataclasses.replace(f, unreadable=why))
    return dataclasses.replace(msg, files=files)


def _read_log(
    matcher: Matcher, path: Path, name: str, notes: list[str], *, threshold: float, max_inflated: int, deadline: float
) -> Diagnosis | None:
    """One log file diagnosed (``name`` in its notes), or None with a note saying why it was not read."""
    try:
        if not file_is_text(path, max_inflated=max_inflated):
            # random or compressed bytes have few NULs: read as a log, their noise matched entries
            notes.append(note("skipped_not_text", file=name))
            return None
        if file_is_blank(path):  # read, it would rank entries against nothing: say it is empty
            notes.append(note("empty", file=name))
            return None
        found = matcher.diagnose_file(path, threshold=threshold, max_inflated_bytes=max_inflated, deadline=deadline)
    except Exception as exc:  # one unreadable file must not lose the rest of the answer
        log.warning("could not read %s: %s", name, exc)
        notes.append(note("unreadable", file=name, error=f"{type(exc).__name__}: {str(exc)[:120]}"))
        return None
    notes += [f"{name}: {n}" for n in found.notes]
    found.notes = []
    return found


def diagnose_message(
    matcher: Matcher, outbox: Outbox, msg: Inbound, *, threshold: float, limits: FileLimits | None = None
) -> Diagnosis:
    """The message's text and each readable attachment, combined in the matcher's one order. The notes
    say which files were skipped, cut short or could not be read, and why."""
    limits = limits or FileLimits()
    deadline = time.monotonic() + limits.budget_s
    unpacked = 0  # bytes read out of this message's files so far
    parts: list[Diagnosis] = []
    notes: list[str] = []
    text = plain_text(msg.text, strip_mentions=True)
    if text:
        parts.append(matcher.diagnose(text, threshold=threshold))
    for f in msg.files:
        if f.unreadable:
            notes.append(note("unreadable", file=f.name, error=f.unreadable))
            continue
        if not is_readable(f) or not f.url:
            notes.append(note("not_a_log", file=f.name))
            continue
        if f.size is not None and f.size > limits.max_file_bytes:
            notes.append(note("too_large", file=f.name, size=size_text(limits.max_file_bytes)))
            continue
        room = limits.max_message_inflated_bytes - unpacked
        if room <= 0 or time.monotonic() >= deadline:
            notes.append(note("time_budget_spent", file=f.name) if room > 0 else
                         note("size_budget_spent", file=f.name, size=size_text(limits.max_message_inflated_bytes)))
            continue
        with tempfile.TemporaryDirectory(prefix="tracebot-") as tmp:
            path = Path(tmp) / download_name(f)
            try:
                outbox.download(f.url, path, limits.max_file_bytes)
            except DownloadTooLarge as exc:  # Slack did not give its size, or gave a wrong one
                notes.append(note("too_large", file=f.name, size=size_text(exc.max_bytes)))
                continue
            except Exception as exc:  # one unreadable file must not lose the rest of the answer
                log.warning("could not read %s: %s", f.name, exc)
                notes.append(note("unreadable", file=f.name, error=f"{type(exc).__name__}: {str(exc)[:120]}"))
                continue
            out = logs_in(f.name, path, Path(tmp), max_bytes=min(limits.max_inflated_bytes, room), deadline=deadline)
            notes += out.notes
            for name, log_path in out.files:
                room = limits.max_message_inflated_bytes - unpacked
                found = _read_log(matcher, log_path, name, notes, threshold=threshold, max_inflated=min(limits.max_inflated_bytes, room), deadline=deadline)
                if found is not None:
                    unpacked += found.bytes_read
                    parts.append(found)
    combined = in_language(combine(parts), matcher.kb) if parts else Diagnosis(threshold=threshold)
    combined.notes = notes + combined.notes
    return combined
