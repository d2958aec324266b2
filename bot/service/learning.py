"""What the service keeps so the knowledge base can learn: the text each answer answered (so a vote on
it becomes a labelled example) and the errors that got no confident answer (the gaps).

Everything kept is scrubbed of secrets and people's names first (:func:`tracebot.secrets.for_keeping`),
and keeping it is a record, not a gate: a store failure is reported and the answer goes out anyway.
"""

from __future__ import annotations

from typing import Any

from tracebot.markup import plain_text
from tracebot.matcher.signals import error_signature
from tracebot.render.slack_maintainers import TOP_GAPS, maintainer_blocks
from tracebot.result import Diagnosis
from tracebot.secrets import Scrubber, for_keeping
from tracebot.service.inbound import Inbound
from tracebot.service.records import Records
from tracebot.store import Store
from tracebot.store.stats import FLAG_BELOW, needs_attention, unanswered

MAX_KEPT_CHARS = 4000  # an example's worth: the corpus wants the error, not the whole log


def answered_text(msg: Inbound, diagnosis: Diagnosis, scrubber: Scrubber) -> str:
    """The message's text; for an attached log, the lines that carried the evidence."""
    text = plain_text(msg.text, strip_mentions=True).strip()
    if not text:
        lines = [diagnosis.first_failure.text] if diagnosis.first_failure else []
        lines += [m.line for m in diagnosis.matches if m.line and m.line not in lines]
        text = "\n".join(lines[:5])
    return for_keeping(text[:MAX_KEPT_CHARS], scrubber)


def note_unanswered(store: Store, records: Records, msg: Inbound, diagnosis: Diagnosis, text: str) -> None:
    """Keep an error that got no confident answer, keyed by its masked signature (and, for a log, the
    first failure's exception type). Chatter with no error line in it is not a gap."""
    if diagnosis.confident:
        return
    exception = diagnosis.first_failure.exception if diagnosis.first_failure else None
    signature = error_signature(text)
    if signature is None and exception is None:
        return
    records.attempt(
        "recording an unanswered error",
        lambda: store.record_unanswered(
            channel=msg.channel, signature=signature, exception=exception, excerpt=text[:500]
        ),
        None,
    )


def maintainer_home(store: Store, records: Records) -> list[dict[str, Any]]:
    """The App Home sections for admins: entries below the helpful threshold, and the top gaps."""
    flagged = records.attempt("reading feedback", lambda: needs_attention(store), [])
    gaps = records.attempt("reading unanswered errors", lambda: unanswered(store, limit=TOP_GAPS), [])
    return maintainer_blocks(flagged=flagged, gaps=gaps, threshold=FLAG_BELOW)
