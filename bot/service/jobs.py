"""tracebot's own bounded job pool: slow work never runs on a transport's listener threads.

Bolt runs listeners on a 5-thread pool; a slow listener there delays the next request's 3-second ack.
So listeners ack at once and hand the work to this pool, which

- runs at most ``workers`` jobs at a time and refuses new work (:class:`PoolBusy`) past ``max_pending``
  in all, or past ``max_per_lane`` for one lane, rather than queueing without bound;
- runs the jobs of one *lane* (a channel) one at a time, in order, and takes lanes in turn, so a
  flooded channel holds at most one worker and queues its own messages behind each other;
- never hands a worker a lane that is not ready yet: ``pace(lane)`` says how many seconds until the
  lane may post (the per-channel rate limit), and a worker takes another lane's job meanwhile instead
  of sleeping on the slot;
- shares running work by key: a second ``/trace job 123`` while the first runs gets the first job back;
- lets a job report progress to whoever listens (the Slack progress line, the console).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)
PACE_RECHECK_S = 0.25


class PoolBusy(RuntimeError):
    """Too much work is already waiting; the message is shown to the user."""


@dataclass
class Job:
    id: int
    label: str
    key: str | None = None
    lane: str = ""
    future: Future[Any] = field(default_factory=Future)
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    # Set by the job itself (e.g. where its parent message is) so a duplicate request can point at it.
    meta: dict[str, Any] = field(default_factory=dict)
    _listeners: list[Callable[[str], None]] = field(default_factory=list, repr=False)
    last_progress: str = ""

    def progress(self, message: str) -> None:
        self.last_progress = message
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception:  # a failing progress display must not fail the work
                log.exception("progress listener failed for job %s", self.label)

    def on_progress(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    @property
    def done(self) -> bool:
        return self.future.done()


@dataclass
class _Lane:
    queue: deque[tuple[Job, Callable[[Job], Any], bool]] = field(default_factory=deque)  # (job, fn, urgent)
    busy: bool = False
    urgent: int = 0  # queued jobs that skipped the bounds (at most one: a notice about this lane)


class JobPool:
    def __init__(
        self,
        workers: int = 4,
        max_pending: int = 500,
        name: str = "tracebot-job",
        *,
        max_per_lane: int | None = None,
        pace: Callable[[str], float] | None = None,
    ) -> None:
        self.workers = workers
        self.max_pending = max_pending
        self.max_per_lane = max_per_lane
        self.pace = pace  # seconds until a named lane may run its next job (None: always at once)
        self._name = name
        self._cond = threading.Condition()
        self._lanes: dict[str, _Lane] = {}
        self._order: deque[str] = deque()  # lanes with queued work, in the order workers visit them
        self._running: dict[str, Job] = {}
        self._pending = 0
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._stopping = False

    def submit(
        self,
        fn: Callable[[Job], Any],
        *,
        label: str,
        key: str | None = None,
        lane: str | None = None,
        meta: dict[str, Any] | None = None,
        urgent: bool = False,
    ) -> tuple[Job, bool]:
        """Run ``fn(job)`` on the pool. Returns ``(job, created)``; ``created`` is False when a job with
        the same ``key`` was still running and is returned instead.

        Jobs with the same ``lane`` run one at a time, in order. An ``urgent`` job (a notice that the
        lane is shedding load) goes to the front of its lane and skips the bounds; a lane holds at most
        one, so they cannot pile up."""
        with self._cond:
            if self._stopping:
                raise PoolBusy("tracebot is shutting down")
            if key is not None and key in self._running:
                return self._running[key], False
            job = Job(id=next(self._ids), label=label, key=key, meta=dict(meta or {}))
            job.lane = lane if lane is not None else f"#{job.id}"
            state = self._lanes.get(job.lane)
            if urgent:
                if state is not None and state.urgent:
                    raise PoolBusy(f"a notice for {job.lane} is already waiting")
            elif self._pending >= self.max_pending:
                raise PoolBusy(f"tracebot is busy ({self._pending} jobs waiting); try again in a minute")
            elif (
                lane is not None
                and self.max_per_lane is not None
                and state is not None
                and len(state.queue) + state.busy >= self.max_per_lane
            ):
                raise PoolBusy(
                    f"tracebot is busy here ({len(state.queue) + state.busy} waiting in this channel); "
                    "try again in a minute"
                )
            if state is None:
                state = self._lanes[job.lane] = _Lane()
            if not state.queue and not state.busy:
                self._order.append(job.lane)
            if urgent:
                state.queue.appendleft((job, fn, True))
                state.urgent += 1
            else:
                state.queue.append((job, fn, False))
            self._pending += 1
            if key is not None:
                self._running[key] = job
            self._start_workers()
            self._cond.notify()
        return job, True

    def _start_workers(self) -> None:
        while len(self._threads) < self.workers:
            t = threading.Thread(
                target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(t)
            t.start()

    def _take(self) -> tuple[Job, Callable[[Job], Any]] | float | None:
        """The next job whose lane is free and ready, visiting lanes in turn; else how long until a
        lane becomes ready (None: nothing is waiting)."""
        soonest: float | None = None
        for _ in range(len(self._order)):
            name = self._order[0]
            self._order.rotate(-1)
            lane = self._lanes[name]
            if lane.busy or not lane.queue:
                continue
            wait = self.pace(name) if self.pace is not None and not name.startswith("#") else 0.0
            if wait > 0:
                soonest = wait if soonest is None else min(soonest, wait)
                continue
            job, fn, urgent = lane.queue.popleft()
            lane.urgent -= urgent
            lane.busy = True
            return job, fn
        return soonest

    def _work(self) -> None:
        while True:
            with self._cond:
                while True:
                    taken = self._take()
                    if isinstance(taken, tuple):
                        break
                    if self._stopping and self._pending == 0:
                        return
                    # Look again at least every PACE_RECHECK_S: the pace may run on a clock of its own.
                    self._cond.wait(timeout=None if taken is None else min(taken, PACE_RECHECK_S))
            job, fn = taken
            self._run(job, fn)

    def _run(self, job: Job, fn: Callable[[Job], Any]) -> None:
        job.started_at = time.monotonic()
        try:
            job.future.set_result(fn(job))
        except BaseException as exc:
            log.exception("job %s failed", job.label)
            job.future.set_exception(exc)
        finally:
            with self._cond:
                self._pending -= 1
                lane = self._lanes[job.lane]
                lane.busy = False
                if not lane.queue:
                    del self._lanes[job.lane]
                    self._order.remove(job.lane)
                if job.key is not None and self._running.get(job.key) is job:
                    del self._running[job.key]
                self._cond.notify_all()

    def running(self, key: str) -> Job | None:
        with self._cond:
            return self._running.get(key)

    @property
    def pending(self) -> int:
        with self._cond:
            return self._pending

    def waiting(self, lane: str) -> int:
        """Jobs queued or running in ``lane``."""
        with self._cond:
            state = self._lanes.get(lane)
            return len(state.queue) + state.busy if state else 0

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no job is queued or running (the console and tests use this)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout=timeout)

    def shutdown(self, wait: bool = True) -> None:
        with self._cond:
            self._stopping = True
            if not wait:
                for lane in self._lanes.values():
                    while lane.queue:
                        job, _fn, _urgent = lane.queue.popleft()
                        job.future.cancel()
                        self._pending -= 1
                        if job.key is not None and self._running.get(job.key) is job:
                            del self._running[job.key]
            self._cond.notify_all()
        if wait:
            for t in self._threads:
                t.join()
