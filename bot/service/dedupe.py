"""Keys that name one delivery, so each Slack event is handled once.

Slack retries an event it thinks was not acknowledged (same ``event_id``) and, with several Socket Mode
connections open, may deliver it on more than one. A message is also named by its channel and ``ts``,
which covers a redelivery under a new envelope. Keys are namespaced by the handler (``auto``,
``direct``): one message legitimately reaches both the message and the ``app_mention`` listener.
The store records the keys (:meth:`tracebot.store.Store.claim_event`) so this survives restarts.
"""

from __future__ import annotations


def delivery_keys(handler: str, *, event_id: str | None, channel: str | None, ts: str | None) -> list[str]:
    keys = []
    if event_id:
        keys.append(f"{handler}:ev:{event_id}")
    if channel and ts:
        keys.append(f"{handler}:msg:{channel}:{ts}")
    return keys
