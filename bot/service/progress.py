"""The progress line under a running /trace command: one message in the thread, edited as work goes.

Edits are throttled (Slack's chat.update is rate limited and a chatty plugin could report per rank);
the latest message is kept and shown at the next allowed moment or replaced by the final state.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tracebot.render import slack as render

FINISHED = ":checkered_flag:"


class ProgressLine:
    def __init__(self, outbox: Any, channel: str, thread_ts: str, interval_s: float = 1.0) -> None:
        self.outbox = outbox
        self.channel = channel
        self.interval_s = interval_s
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._last_edit = 0.0
        self._closed = False
        self.ts = outbox.post(channel, *render.progress("starting", 0), thread_ts=thread_ts)

    def update(self, message: str) -> None:
        with self._lock:
            now = time.monotonic()
            if self._closed or now - self._last_edit < self.interval_s:
                return
            self._last_edit = now
            self.outbox.update(self.channel, self.ts, *render.progress(message, now - self.started))

    def close(self, finished: bool) -> None:
        """The final state of the trace itself. Whether the traced job failed is the result's to say:
        a trace that worked out why a job failed has finished, not failed."""
        with self._lock:
            self._closed = True
            elapsed = time.monotonic() - self.started
            text = (
                f"{FINISHED} trace finished in {elapsed:.1f}s"
                if finished
                else f"{render.STATUS_EMOJI['error']} trace failed after {elapsed:.1f}s; the error is in my log"
            )
            self.outbox.update(self.channel, self.ts, text, [render.context(text)])
