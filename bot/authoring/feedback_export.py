"""``tracebot kb export-feedback``: Helpful / Not this votes as labelled corpus cases for review.

A Helpful vote is a positive case (``expected``: the entry); a Not this vote is a negative for that entry
(``expected: null`` with ``not_ok: [entry]``: whatever answers it, it must not be this one). Cases are
deduplicated by the masked text, so the same error from forty ranks or forty users is one case. The text
was scrubbed of secrets and people's names when it was stored, and is scrubbed again on the way out.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from tracebot.matcher.normalize import mask
from tracebot.secrets import for_keeping
from tracebot.store import Store
from tracebot.store.stats import voted_texts


def feedback_cases(store: Store) -> list[dict[str, Any]]:
    cases: dict[tuple[str, str, bool], dict[str, Any]] = {}
    for vote in voted_texts(store):
        text = for_keeping(vote["text"])
        helpful = bool(vote["helpful"])
        key = (mask(text), vote["entry_id"], helpful)
        if key in cases:
            cases[key]["votes"] += 1
            continue
        digest = hashlib.sha1(key[0].encode()).hexdigest()[:10]  # noqa: S324 (a name, not a secret)
        cases[key] = {
            "id": f"feedback-{vote['entry_id']}-{'helpful' if helpful else 'not-this'}-{digest}",
            "text": text,
            "expected": vote["entry_id"] if helpful else None,
            "also_ok": [],
            **({} if helpful else {"not_ok": [vote["entry_id"]]}),
            "kind": "feedback",
            "source": "Slack feedback (Helpful)" if helpful else "Slack feedback (Not this)",
            "votes": 1,
        }
    return list(cases.values())


class WontWrite(Exception):
    """``--out`` names a file tracebot will not write: one that exists (without ``--force``), or a symlink."""


def write_cases(cases: list[dict[str, Any]], path: Path, *, force: bool = False) -> None:
    """The cases as JSONL in ``path``; a new file is readable by its user alone (0600), as the store is: the
    texts come from DMs and private channels too. An existing file is written over only with ``force`` (a
    typo'd path truncated the database or a reviewed export) and keeps the mode its owner gave it; a
    symlink never is (it would write wherever it points), checked by the open itself, not before it."""
    if path.is_symlink():
        raise WontWrite(f"{path} is a symbolic link; tracebot does not write through one")
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
        raise WontWrite(f"{path} exists; pass --force to write over it") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # made a symlink since the check above
            raise WontWrite(f"{path} is a symbolic link; tracebot does not write through one") from None
        raise
    with open(fd, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
