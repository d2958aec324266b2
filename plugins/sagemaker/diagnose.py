"""The text the knowledge base is matched on for a training job: its FailureReason and its hosts' logs.

One text, one diagnosis: the FailureReason first (SageMaker copies the end of the failing process's
stderr into it), then every host's lines as ``algo-N: <line>`` so each match reports its hosts. Only
confident matches are kept (``ctx.match``), as for every other /trace reply: the right answer or nothing.
"""

from __future__ import annotations


def job_text(failure_reason: str, log_text: str) -> str:
    return "\n".join(part for part in (failure_reason.strip(), log_text) if part)
