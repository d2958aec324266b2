"""Run the knowledge-base matcher over a job's FailureReason and its hosts' logs in one pass.

One text, one diagnosis: the FailureReason first (SageMaker copies the end of the failing process's
stderr into it), then every host's lines as ``algo-N: <line>`` so each match reports its hosts. The
matcher's own order already puts confident root causes before symptoms; only confident matches are
kept, as for every other /trace reply (the right answer or nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracebot.result import Match

if TYPE_CHECKING:
    from tracebot.matcher import Matcher


def diagnose_job(matcher: Matcher, failure_reason: str, log_text: str) -> list[Match]:
    text = "\n".join(part for part in (failure_reason.strip(), log_text) if part)
    if not text:
        return []
    return [m for m in matcher.diagnose(text).matches if m.confident]
