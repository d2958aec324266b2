"""Secrets never leave tracebot: the one scrubber for text that goes to Slack, a terminal or a log."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Token shapes that must never reach Slack or a log even if an exception message carries one.
_SECRET_SHAPES = re.compile(r"xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|(?<![A-Z0-9])AKIA[A-Z0-9]{16}")
REDACTED = "[redacted]"


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with each of ``secrets`` and every token-shaped string replaced by ``[redacted]``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return _SECRET_SHAPES.sub(REDACTED, text)
