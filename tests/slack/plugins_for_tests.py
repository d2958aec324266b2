"""Real plugins (pluggy hookimpls through the plugin host) used by the Slack tests."""

from __future__ import annotations

import threading
import time
from typing import Any

from tracebot.plugin_api import Command, CommandContext, NotAllowed, UsageError, hookimpl
from tracebot.result import Attachment, Frame, Result, Section, StackGroup, Table


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
            stuck = Frame(function="all_reduce", filename="/srv/train.py", line=7)
            groups = [
                StackGroup(ranks=[str(r) for r in range(59)], frames=[stuck], where=stuck),
                StackGroup(ranks=["59"], frames=[Frame("read_shard", "/srv/data.py", 3)],
                           where=Frame("read_shard", "/srv/data.py", 3), odd_one_out=True),
            ]
            return Result(
                title="big",
                summary="60 ranks",
                sections=sections,
                stack_groups=groups,
                attachments=[Attachment("ranks.txt", b"rank 0: ok\n" * 10, title="All ranks")],
            )

        return [
            Command(
                name="big", usage="/trace big", help="A large result (tests).", parse=lambda w: {}, run=run
            ),
            # answered in the slash command's ack, which only the caller sees and no file can follow
            Command(name="bigquick", usage="/trace bigquick", help="A large quick result (tests).",
                    parse=lambda w: {}, run=run, quick=True),
        ]


class EchoPlugin:
    """``/trace echo <text>``: puts the text in every part of a Result (title, summary, section, table,
    stack group, unreadable, note, attachment name and content) and in a progress message: what a plugin
    would do with a job name, a log line or a py-spy file name it did not write itself."""

    def run(self, ctx: CommandContext, text: str) -> Result:
        ctx.progress(f"reading {text}")
        frame = Frame(function=text, filename=f"/srv/{text}.py", line=7)
        return Result(
            title=f"echo {text}",
            summary=text,
            status="warning",
            sections=[Section(text, text)],
            tables=[Table(text, ["value"], [[text]])],
            stack_groups=[StackGroup(ranks=["0"], frames=[frame], where=frame, hosts=[text])],
            unreadable={text: text},
            attachments=[Attachment(f"{text}.txt", text.encode(), title=text)],
            data={"notes": [text]},
        )

    @hookimpl
    def register_commands(self) -> list[Command]:
        return [
            Command(
                name="echo",
                usage="/trace echo <text>",
                help="Echoes its text everywhere (tests).",
                parse=lambda words: {"text": words[0] if words else ""},
                run=self.run,
                takes_text=True,
            )
        ]


class GuardedPlugin:
    """``/trace guarded <n>``: refuses, while running, a caller with no cluster user (as ``/trace job``
    does once it knows whose job it is)."""

    def run(self, ctx: CommandContext, n: int) -> Result:
        if ctx.caller.cluster_user is None:
            raise NotAllowed(f"Your Slack user is not mapped to a cluster user, so you may not look at job {n}.")
        return Result(title=f"guarded {n}", summary=f"job {n} belongs to {ctx.caller.cluster_user}", status="ok")

    @hookimpl
    def register_commands(self) -> list[Command]:
        return [Command(name="guarded", usage="/trace guarded <job>", help="Refuses unmapped users (tests).",
                        parse=_parse_n, run=self.run, timeout_s=30)]
