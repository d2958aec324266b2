"""The progress line under a running /trace: what a person watching the thread reads while it runs."""

from __future__ import annotations

import threading
import time
from typing import Any

from tracebot.service.progress import ProgressLine


class Thread:
    """The one progress message, as the thread shows it after each edit."""

    def __init__(self) -> None:
        self.shown = ""
        self.changed = threading.Condition()

    def post(self, channel: str, text: str, blocks: Any = None, thread_ts: str | None = None) -> str:
        self.shown = text
        return "1.0"

    def update(self, channel: str, ts: str, text: str, blocks: Any = None) -> None:
        with self.changed:
            self.shown = text
            self.changed.notify_all()

    def wait_for(self, words: str, timeout: float = 10.0) -> str:
        end = time.monotonic() + timeout
        with self.changed:
            while words not in self.shown and time.monotonic() < end:
                self.changed.wait(end - time.monotonic())
        return self.shown


def test_the_latest_step_is_shown_even_when_it_came_too_soon_after_the_one_before():
    # Edits are throttled; a step reported within the interval was dropped, so the thread said "dumping
    # 64 ranks" for the rest of a long log read that had started a moment later
    thread = Thread()
    line = ProgressLine(thread, "C1", "1.0", interval_s=0.2)
    line.update("dumping 64 ranks on 8 nodes")
    line.update("reading the job's log (2 GB)")
    assert "reading the job's log" in thread.wait_for("reading the job's log")
    line.close(finished=True)
    assert "trace finished" in thread.shown

