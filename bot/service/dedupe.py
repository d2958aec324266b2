"""Keys that name one delivery, so each Slack event is handled once.

Slack retries an event it thinks was not acknowledged (same ``event_id``) and, with several Socket Mode
connections open, may deliver it on more than one. A message is also named by its channel and ``ts``,
which covers a redelivery under a new envelope. Keys are namespaced by the handler (``auto``,
``direct``): one message legitimately reaches both the message and the ``app_mention`` listener.
The store records the keys (:meth:`tracebot.store.Store.claim_event`) so this survives restarts: the work a
restart answers again from the inbox (:mod:`tracebot.service.inbox`) is not answered a second time when
Slack redelivers it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict


def delivery_keys(handler: str, *, event_id: str | None, channel: str | None, ts: str | None) -> list[str]:
    keys = []
    if event_id:
        keys.append(f"{handler}:ev:{event_id}")
    if channel and ts:
        keys.append(f"{handler}:msg:{channel}:{ts}")
    return keys


class RecentKeys:
    """Delivery keys claimed in this process: dedupe that still works when the database does not
    (locked, read-only, full). Bounded: the oldest keys are forgotten first; Slack retries within
    minutes, so thousands of keys cover any redelivery."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, keys: list[str]) -> bool:
        """True for the first caller to present any of ``keys``; the keys are then taken."""
        with self._lock:
            if any(k in self._keys for k in keys):
                return False
            for k in keys:
                self._keys[k] = None
            while len(self._keys) > self.limit:
                self._keys.popitem(last=False)
            return True

    def release(self, keys: list[str]) -> None:
        with self._lock:
            for k in keys:
                self._keys.pop(k, None)
