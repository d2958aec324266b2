"""The progress line under a running /trace command: one message in the thread, edited as work goes.

Edits are throttled (Slack's chat.update is rate limited and a chatty plugin could report per rank);
the latest message is kept and shown at the next allowed moment (a timer) or replaced by the final state.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from tracebot.render import slack as render

log = logging.getLogger(__name__)
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
        self._pending: str | None = None  # the latest step, held back by the throttle
        self._timer: threading.Timer | None = None
        self.ts = outbox.post(channel, *render.progress("starting", 0), thread_ts=thread_ts)

    def update(self, message: str) -> None:
        with self._lock:
            if self._closed:
                return
            self._pending = message
            wait = self.interval_s - (time.monotonic() - self._last_edit)
            if wait <= 0:
                self._show()
            elif self._timer is None:  # shown when the interval is up, unless a later step replaces it
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or self._pending is None:
                return
            try:
                self._show()
            except Exception:  # a progress edit Slack refuses loses only that edit (on the timer's thread)
                log.warning("could not update the progress line %s/%s", self.channel, self.ts, exc_info=True)

    def _show(self) -> None:
        """Edit the line to the pending step (the lock is held)."""
        message, self._pending = self._pending or "", None
        self._last_edit = now = time.monotonic()
        self.outbox.update(self.channel, self.ts, *render.progress(message, now - self.started))

    def close(self, finished: bool) -> None:
        """The final state of the trace itself. Whether the traced job failed is the result's to say:
        a trace that worked out why a job failed has finished, not failed."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            elapsed = time.monotonic() - self.started
            text = (
                f"{FINISHED} trace finished in {elapsed:.1f}s"
                if finished
                else f"{render.STATUS_EMOJI['error']} trace failed after {elapsed:.1f}s; the error is in my log"
            )
            self.outbox.update(self.channel, self.ts, text, [render.context(text)])
