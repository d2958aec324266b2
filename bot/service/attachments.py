"""Diagnosing one message: its text and the text or log files attached to it, as one ranked Diagnosis."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from tracebot.matcher import Matcher, combine
from tracebot.result import Diagnosis
from tracebot.service.inbound import FileRef, Inbound, plain_text
from tracebot.service.outbox import Outbox

log = logging.getLogger(__name__)

_TEXT_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".json", ".yaml", ".yml", ".py", ".trace")
_TEXT_FILETYPES = {"text", "log", "plain", "python", "shell", "json", "yaml", "gzip", "csv", "markdown"}


def is_text_file(f: FileRef) -> bool:
    if f.mimetype.startswith(("image/", "video/", "audio/")):
        return False
    return (
        f.mimetype.startswith("text/")
        or f.mimetype in ("application/gzip", "application/x-gzip", "application/json")
        or f.filetype in _TEXT_FILETYPES
        or f.name.lower().endswith(_TEXT_SUFFIXES)
    )


def diagnose_message(
    matcher: Matcher, outbox: Outbox, msg: Inbound, *, threshold: float, max_file_bytes: int
) -> Diagnosis:
    """The message's text and each readable attachment, combined in the matcher's one order. The notes
    say which files were skipped or could not be read, and why."""
    parts: list[Diagnosis] = []
    notes: list[str] = []
    text = plain_text(msg.text, strip_mentions=True)
    if text:
        parts.append(matcher.diagnose(text, threshold=threshold))
    for f in msg.files:
        if not is_text_file(f) or not f.url:
            notes.append(f"{f.name}: skipped, not a text or log file")
            continue
        if f.size is not None and f.size > max_file_bytes:
            notes.append(f"{f.name}: skipped, larger than {max_file_bytes >> 20} MB")
            continue
        with tempfile.TemporaryDirectory(prefix="tracebot-") as tmp:
            path = Path(tmp) / ("upload.gz" if f.name.lower().endswith(".gz") else "upload.log")
            try:
                outbox.download(f.url, path, max_file_bytes)
                parts.append(matcher.diagnose_file(path, threshold=threshold))
            except Exception as exc:  # one unreadable file must not lose the rest of the answer
                log.warning("could not read %s: %s", f.name, exc)
                notes.append(f"{f.name}: could not be read ({type(exc).__name__}: {str(exc)[:120]})")
    combined = combine(parts) if parts else Diagnosis(threshold=threshold)
    combined.notes = notes + combined.notes
    return combined
