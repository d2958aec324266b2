"""The durable inbox: accepted work that a killed process would otherwise lose.

Slack has its ack once tracebot claims a delivery, and will not send it again; the job pool is in
memory. So what answering needs (the message, or the ``/trace`` command and who asked) is written to
the store with the claim, in the same transaction, and deleted (the user's text with it) once the
answer or an explained failure is posted. At start, :meth:`Inbox.adopt` takes the rows of processes
that are gone (``kill -9``, OOM, crash, reboot, a drain cut short), one process at a time, and the
service answers them again (:meth:`tracebot.service.service.Service.resume`).

The store is a record, not a gate: when writing the row fails, the work is queued as before and only
its durability is lost (the failure is logged and shown in the App Home).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from tracebot.service.records import Records
from tracebot.store import Store, Work
from tracebot.store import owner as owners

log = logging.getLogger(__name__)


class Inbox:
    def __init__(self, store: Store, records: Records, owner: str | None = None, *, durable: bool = True) -> None:
        self.store = store
        self.records = records
        self.owner = owner or owners.token()
        # False (the console): deliveries are still claimed, but no work is written down to answer again
        self.durable = durable

    def claim(self, keys: list[str], kind: str, payload: dict[str, Any]) -> int | bool:
        """Claim a delivery and record its work: False when it was seen before, else the work's id
        (True when the store could not record it: answered, but not durably)."""
        if not self.durable:
            return self.records.attempt("claiming a Slack event", lambda: self.store.claim_event(*keys), True)
        work = Work(kind, payload, self.owner)
        return self.records.attempt("claiming a Slack event", lambda: self.store.claim_work(keys, work), True)

    def add(self, kind: str, payload: dict[str, Any]) -> int | None:
        """Record work accepted without a delivery (a ``/trace`` run)."""
        if not self.durable:
            return None
        work = Work(kind, payload, self.owner)
        return self.records.attempt("recording accepted work", lambda: self.store.add_work(work), None)

    def where(self, work_id: int | None, channel: str, ts: str) -> None:
        """The work's answer is being written in the thread of ``ts`` in ``channel``."""
        if work_id is not None:
            thread = json.dumps([channel, ts])
            self.records.attempt("recording where work is answered", lambda: self.store.set_work_thread(work_id, thread), None)

    def done(self, work_id: int | None) -> None:
        if work_id is not None:
            self.records.attempt("finishing accepted work", lambda: self.store.finish_work(work_id), None)

    def adopt(self, max_age_s: float, now: Callable[[], float] = time.time) -> list[Work]:
        """The work of processes that are gone, now this one's. A row whose process cannot be checked
        (another host's, or written where /proc could not be read) is taken only once older than
        ``max_age_s`` (to be dropped, with a note): before, one without a readable start time counted as
        alive for as long as its pid was in use, and was never answered nor dropped."""

        def orphaned(owner: str, created_at: float) -> bool:
            if owners.checkable(owner):
                return not owners.alive(owner)
            return now() - created_at > max_age_s

        return self.records.attempt(
            "reading work left by a stopped process", lambda: self.store.adopt_work(self.owner, orphaned), []
        )


def thread_of(work: Work) -> tuple[str, str] | None:
    """Where a ``/trace`` run's answer was being written, if its parent message was posted."""
    if not work.thread:
        return None
    channel, ts = json.loads(work.thread)
    return str(channel), str(ts)
