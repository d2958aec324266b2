"""Answers Slack would not take: kept, tried again when Slack is back, and given up on visibly.

A job answering accepted work ends when its answer or an explained failure is posted, and its inbox row
goes then. When Slack cannot be reached for either (every try of the answer and of the apology ended in
:class:`~tracebot.service.outbox.PostUnconfirmed`: timeouts, 5xx), deleting the row lost the message.
Now the row stays and the job runs again after a growing wait (``DELAYS_S``), its posts looked for
before they are sent again (:class:`~tracebot.service.outbox.Delivery`), so nothing lands twice. A
process stopped meanwhile leaves the row to the next start (:meth:`Inbox.adopt`, ``Service.resume``).
Past ``give_up_after_s`` the work is dropped: logged, and listed in the App Home for admins.

Work the store could not write down (read-only, full, locked: no inbox row) is tried again the same way
in this process, its posts keyed by a name of its own; only a restart meanwhile loses it.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracebot.service.inbox import Inbox
from tracebot.service.outbox import DELIVERY, Delivery, PostUnconfirmed

log = logging.getLogger(__name__)
DELAYS_S = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0)  # then every 300 s, until the work is given up
LATER = object()  # what a durable job returns when Slack could not be reached: it runs again later
Submit = Callable[[Callable[[Any], object], str, str | None], None]


@dataclass(frozen=True)
class GaveUp:
    label: str
    reason: str
    at: float

    def __str__(self) -> str:
        return f"{self.label}: Slack did not take it ({self.reason}); given up"


class Redelivery:
    def __init__(
        self,
        inbox: Inbox,
        submit: Submit,
        *,
        give_up_after_s: float,
        delays_s: tuple[float, ...] = DELAYS_S,
        clock: Callable[[], float] = time.monotonic,
        keep: int = 20,
    ) -> None:
        self.inbox = inbox
        self.submit = submit  # queue a job on the pool: (fn, label, lane)
        self.give_up_after_s = give_up_after_s
        self.delays_s = delays_s
        self._clock = clock
        self._cond = threading.Condition()
        # (due, order, action): one thread waits for the earliest, however many messages wait
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._firing = 0
        self._thread: threading.Thread | None = None
        self._gave_up: deque[GaveUp] = deque(maxlen=keep)
        self._stopped = False
        self.scheduled = 0  # tries ever scheduled: a change says a job failed while someone waited

    def durable(
        self, fn: Callable[[Any], object], work_id: int | None, label: str, lane: str | None, *, again: bool = False
    ) -> Callable[[Any], object]:
        """``fn`` as a job that finishes its work when it returns or raises, except when Slack could not
        be reached: then it runs again later. ``again``: the work was started by a process now gone,
        which may have posted part of it. ``work_id`` None: the store could not record the work, so it is
        tried again only while this process lives (accepted all the same: Slack will not send it again)."""
        first = self._clock()
        # The posts' key: the inbox row's id, or a name of this process's own for work without a row
        name = f"w{work_id}" if work_id is not None else f"m{uuid.uuid4().hex[:16]}"

        def run(job: Any, attempt: int = 0) -> object:
            token = DELIVERY.set(Delivery(name, again=again or attempt > 0))
            try:
                result = fn(job)
            except PostUnconfirmed as exc:
                log.warning("Slack could not be reached for %s (%s)", label, exc)
                self._later(run, attempt + 1, first, label, lane, work_id, str(exc))
                return LATER
            except BaseException:
                self.inbox.done(work_id)
                raise
            else:
                self.inbox.done(work_id)
                return result
            finally:
                DELIVERY.reset(token)

        return run

    def _later(
        self, run: Callable[..., object], attempt: int, first: float, label: str, lane: str | None,
        work_id: int | None, why: str,
    ) -> None:
        """``run`` again after the attempt's wait; given up (its work done) when that is past the bound."""
        delay = self.delays_s[min(attempt - 1, len(self.delays_s) - 1)] if self.delays_s else 0.0
        if self._clock() + delay - first > self.give_up_after_s:
            self._give_up(label, why)
            self.inbox.done(work_id)
            return

        def fire() -> None:
            try:
                self.submit(lambda job: run(job, attempt), f"{label} (try {attempt + 1})", lane)
            except Exception as exc:  # the pool is full: the next wait, as if Slack had failed again
                log.warning("could not queue %s again (%s)", label, exc)
                self._later(run, attempt + 1, first, label, lane, work_id, why)

        with self._cond:
            if self._stopped:
                return  # stopping: the row stays for the next start
            heapq.heappush(self._due, (self._clock() + delay, self.scheduled, fire))
            self.scheduled += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tracebot-redelivery", daemon=True)
                self._thread.start()
            self._cond.notify()
        log.info("%s: try %d in %.0f s", label, attempt + 1, delay)

    def _loop(self) -> None:
        with self._cond:
            while not self._stopped:
                if not self._due:
                    self._cond.wait()
                    continue
                wait = self._due[0][0] - self._clock()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                _due, _order, fire = heapq.heappop(self._due)
                self._firing += 1  # still waiting until it is in the pool: waiting for idle sees it somewhere
                self._cond.release()
                try:
                    fire()
                except Exception:
                    log.exception("trying accepted work again failed")
                finally:
                    self._cond.acquire()
                    self._firing -= 1

    def _give_up(self, label: str, reason: str) -> None:
        log.error(
            "gave up on %s: Slack could not be reached for %.0f s to post its answer or an apology (%s)",
            label, self.give_up_after_s, reason,
        )
        with self._cond:
            self._gave_up.append(GaveUp(label, reason, time.time()))

    @property
    def waiting(self) -> int:
        """Work waiting for its next try."""
        with self._cond:
            return len(self._due) + self._firing

    @property
    def gave_up(self) -> list[GaveUp]:
        """The latest work given up on, newest first (the App Home shows it)."""
        with self._cond:
            return list(reversed(self._gave_up))

    def stop(self) -> None:
        """No more tries in this process: what waits stays in the inbox for the next start."""
        with self._cond:
            self._stopped = True
            self._due.clear()
            self._cond.notify_all()
