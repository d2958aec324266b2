"""Storage is a record, not a gate: an answer is posted even when writing it down fails.

Every store call the service makes on the way to an answer goes through :meth:`Records.attempt`. A
:class:`~tracebot.store.StoreError` (database locked by another writer, read-only, disk full, file
deleted) is logged, kept here for the App Home, and replaced by a fallback value, so the user still
gets the answer. What the store says about the failure (file and reason) is kept verbatim.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tracebot.store import StoreError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Fault:
    what: str  # what tracebot was doing ("recording a diagnosis")
    error: str  # the store's message: file and reason
    at: float

    def __str__(self) -> str:
        return f"{self.what}: {self.error}"


class Records:
    def __init__(self, keep: int = 20, clock: Callable[[], float] = time.time) -> None:
        self._faults: deque[Fault] = deque(maxlen=keep)
        self._clock = clock
        self._lock = threading.Lock()
        self.count = 0  # every fault since start, including those no longer kept

    def attempt(self, what: str, fn: Callable[[], T], fallback: T) -> T:
        """``fn()``, or ``fallback`` when the store fails (the failure is logged and kept)."""
        try:
            return fn()
        except StoreError as exc:
            self.report(what, exc)
            return fallback

    def report(self, what: str, exc: BaseException) -> None:
        log.error("storage failed while %s (the answer is posted anyway): %s", what, exc)
        with self._lock:
            self.count += 1
            self._faults.append(Fault(what, str(exc), self._clock()))

    @property
    def faults(self) -> list[Fault]:
        """The latest faults, newest first."""
        with self._lock:
            return list(reversed(self._faults))
