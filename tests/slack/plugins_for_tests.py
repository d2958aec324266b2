"""Real plugins (pluggy hookimpls through the plugin host) used by the Slack tests."""

from __future__ import annotations

import threading
import time
from typing import Any

from tracebot.plugin_api import Command, CommandContext, UsageError, hookimpl
from tracebot.result import Attachment, Result, Section


def _parse_n(words: list[str]) -> dict[str, Any]:
    if len(words) != 1 or not words[0].isdigit():
        raise UsageError("give one job number")
    return {"n": int(words[0])}


class SlowPlugin:
    """``/trace slow <n>``: sleeps (reporting progress), like a py-spy dump of a big job."""

    def __init__(self, seconds: float = 1.0) -> None:
        self.seconds = seconds
        self.runs: list[int] = []
        self.release = threading.Event()  # tests that need the run held open set it themselves
        self.release.set()
        self._lock = threading.Lock()

    def run(self, ctx: CommandContext, n: int) -> Result:
        with self._lock:
            self.runs.append(n)
        ctx.progress(f"looking at job {n}")
        time.sleep(self.seconds)
        self.release.wait(30)
        ctx.progress("almost done")
        return Result(title=f"job {n}", summary=f"job {n}: 3 of 4 ranks stuck in allreduce", status="warning")

    @hookimpl
    def register_commands(self) -> list[Command]:
        return [
            Command(
                name="slow",
                usage="/trace slow <job>",
                help="A slow command (tests).",
                parse=_parse_n,
                run=self.run,
                timeout_s=60,
                dedupe_key=lambda kw: f"slow:{kw['n']}",
            )
        ]


class BigPlugin:
    """``/trace big``: a result larger than one Slack message, plus an attachment."""

    @hookimpl
    def register_commands(self) -> list[Command]:
        def run(ctx: CommandContext) -> Result:
            sections = [Section(f"rank {i}", ("frame line\n" * 400)) for i in range(60)]
            return Result(
                title="big",
                summary="60 ranks",
                sections=sections,
                attachments=[Attachment("ranks.txt", b"rank 0: ok\n" * 10, title="All ranks")],
            )

        return [
            Command(
                name="big", usage="/trace big", help="A large result (tests).", parse=lambda w: {}, run=run
            )
        ]
