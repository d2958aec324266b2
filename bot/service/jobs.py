"""tracebot's own bounded job pool: slow work never runs on a transport's listener threads.

Bolt runs listeners on a 5-thread pool; a slow listener there delays the next request's 3-second ack.
So listeners ack at once and hand the work to this pool, which

- runs at most ``workers`` jobs at a time and refuses new work (:class:`PoolBusy`) past ``max_pending``
  rather than queueing without bound;
- shares running work by key: a second ``/trace job 123`` while the first runs gets the first job back;
- lets a job report progress to whoever listens (the Slack progress line, the console).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


class PoolBusy(RuntimeError):
    """Too much work is already waiting; the message is shown to the user."""


@dataclass
class Job:
    id: int
    label: str
    key: str | None = None
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


class JobPool:
    def __init__(self, workers: int = 4, max_pending: int = 500, name: str = "tracebot-job") -> None:
        self.workers = workers
        self.max_pending = max_pending
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._running: dict[str, Job] = {}
        self._pending = 0
        self._ids = itertools.count(1)

    def submit(
        self,
        fn: Callable[[Job], Any],
        *,
        label: str,
        key: str | None = None,
    ) -> tuple[Job, bool]:
        """Run ``fn(job)`` on the pool. Returns ``(job, created)``; ``created`` is False when a job with
        the same ``key`` was still running and is returned instead."""
        with self._lock:
            if key is not None and key in self._running:
                return self._running[key], False
            if self._pending >= self.max_pending:
                raise PoolBusy(f"tracebot is busy ({self._pending} jobs waiting); try again in a minute")
            job = Job(id=next(self._ids), label=label, key=key)
            self._pending += 1
            if key is not None:
                self._running[key] = job
        self._executor.submit(self._run, job, fn)
        return job, True

    def _run(self, job: Job, fn: Callable[[Job], Any]) -> None:
        job.started_at = time.monotonic()
        try:
            job.future.set_result(fn(job))
        except BaseException as exc:
            log.exception("job %s failed", job.label)
            job.future.set_exception(exc)
        finally:
            with self._lock:
                self._pending -= 1
                if job.key is not None and self._running.get(job.key) is job:
                    del self._running[job.key]

    def running(self, key: str) -> Job | None:
        with self._lock:
            return self._running.get(key)

    @property
    def pending(self) -> int:
        with self._lock:
            return self._pending

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no job is queued or running (the console and tests use this)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.pending == 0:
                return True
            time.sleep(0.01)
        return False

    def shutdown(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
