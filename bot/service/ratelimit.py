"""Per-key rate limiting (Slack allows about one message per second per channel, with short bursts).

A token bucket per key: ``rate`` tokens a second, at most ``burst`` saved up. ``acquire`` reserves the
next slot under a lock and sleeps outside it, so callers for different channels never wait on each other;
``delay`` only looks, so a scheduler can run a ready channel's work first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    def __init__(
        self,
        rate: float = 1.0,
        burst: int = 3,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        # GCRA: key -> "theoretical arrival time" of the next message if sent at exactly ``rate``
        self._tat: dict[str, float] = {}

    def acquire(self, key: str) -> float:
        """Wait for a slot for ``key``; return how long we waited."""
        with self._lock:
            now = self._clock()
            wait, tat = self._wait(key, now)
            self._tat[key] = tat + 1.0 / self.rate
        if wait > 0:
            self._sleep(wait)
        return wait

    def delay(self, key: str) -> float:
        """Seconds until ``acquire(key)`` would not wait; reserves nothing. The job pool asks this so a
        worker takes another channel's answer instead of sleeping on this one's slot."""
        with self._lock:
            return self._wait(key, self._clock())[0]

    def _wait(self, key: str, now: float) -> tuple[float, float]:
        tat = max(self._tat.get(key, now), now)
        # Up to ``burst - 1`` messages may run ahead of the steady rate.
        return max(0.0, tat - (self.burst - 1) / self.rate - now), tat
