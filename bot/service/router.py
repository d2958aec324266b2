"""The one dispatcher of ``/trace <words>``: Slack, the console and ``tracebot trace`` all go through it.

Every command, built in (``help``, ``diagnose``, ``kb``, ``config``) or from a plugin, comes from the
same plugin host and is parsed and authorised once, in :meth:`Router.plan`, before anything is queued:
a typo is answered at once and never occupies the job pool. Quick commands are answered in the plan
itself; the rest are run later with :meth:`Router.run`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tracebot.config import Config
from tracebot.plugin_api import SLACK_PREFIX, Caller, CommandContext
from tracebot.result import Result
from tracebot.service.builtin_commands import NAME as BUILTIN_NAME
from tracebot.service.builtin_commands import BuiltinCommands
from tracebot.service.plugin_host import PluginHost, Prepared, config_section

ANYWHERE = ("help", "config")  # answered in every channel, whatever the channel policy says


@dataclass
class Plan:
    """``reply``: ``result`` is the whole answer. ``run``: ``step`` runs later (on the job pool)."""

    kind: Literal["reply", "run"]
    label: str  # what the user asked for, e.g. "job 123"
    result: Result | None = None
    step: Prepared | None = None
    words: list[str] = field(default_factory=list)
    text: str = ""  # what was planned, as Slack sent it: a restart plans it again (service/inbox.py)

    @property
    def command(self) -> str:
        return self.step.command.name if self.step is not None else ""

    @property
    def key(self) -> str | None:
        return self.step.key if self.step is not None else None

    @property
    def timeout_s(self) -> float:
        return self.step.command.timeout_s if self.step is not None else 120.0


class Router:
    def __init__(self, host: PluginHost, config: Config, *, knowledge: Any = None, store: Any = None,
                 typed_as: str = SLACK_PREFIX) -> None:
        self.host = host
        self.config = config
        # how commands are typed where this router takes them: its titles, usage lines and help say so
        self.typed_as = typed_as
        self.knowledge = knowledge  # the knowledge holder (``.kb``, ``.matcher``), or None
        if host.pm.get_plugin(BUILTIN_NAME) is not None:
            host.unregister(name=BUILTIN_NAME)
        host.register(BuiltinCommands(host, knowledge, store, config), name=BUILTIN_NAME)

    def command_names(self) -> list[str]:
        return sorted(self.host.get_commands())

    def plan(self, text: str, caller: Caller, channel: str | None) -> Plan:
        """Find, authorise and parse ``text`` once; answer quick commands and every refusal now."""
        words = text.split()
        name = words[0].lower() if words else "help"
        label = " ".join(words) or "help"
        cmd = self.host.get_commands().get(name)
        if cmd is not None and name not in ANYWHERE and not self.config.channels.may_trace(channel):
            return Plan("reply", label, result=Result(
                title=f"{self.typed_as} {name}", status="error", data={"error": "not_here"},
                summary=f"`{self.typed_as} {name}` is not enabled in this channel: tracebot's admins chose where it runs "
                        "(`channels: trace:` in TRACEBOT_CONFIG). Run it in one of those channels, or in a DM "
                        "with me.",
            ))
        args = [text.strip()[len(words[0]):].strip()] if cmd is not None and cmd.takes_text and words else words[1:]
        step = self.host.prepare(name, args, caller, typed_as=self.typed_as)
        if isinstance(step, Result):
            return Plan("reply", label, result=step)
        if step.command.quick:
            return Plan("reply", label, result=self.run_step(step, self.context(step, caller, channel)))
        if step.command.takes_text:  # the label and the run's record name the command, not the paste
            return Plan("run", step.command.name, step=step, text=text)
        return Plan("run", label, step=step, words=args, text=text)

    def context(
        self,
        step: Prepared,
        caller: Caller,
        channel: str | None,
        progress: Callable[[str], None] | None = None,
    ) -> CommandContext:
        """What the command may see: its own config section, the matcher, never the Slack secrets."""
        ctx = CommandContext(
            caller=caller,
            settings=self.config.plugin_settings(config_section(step.command.plugin)),
            deadline=time.monotonic() + step.command.timeout_s,
            channel=channel,
            matcher=self.knowledge.matcher if self.knowledge is not None else None,
            secrets=self.config.secrets(),
            typed_as=self.typed_as,
        )
        if progress is not None:
            ctx.progress = progress
        return ctx

    def run_step(self, step: Prepared, ctx: CommandContext) -> Result:
        return self.host.run_prepared(step, ctx)

    def run(self, plan: Plan, ctx: CommandContext) -> Result:
        """Run a ``run`` plan; every failure comes back as an error Result."""
        assert plan.step is not None
        return self.host.run_prepared(plan.step, ctx)

    def run_text(
        self, text: str, caller: Caller, channel: str | None = None, progress: Callable[[str], None] | None = None
    ) -> Result:
        """Plan and run at once (``tracebot trace``)."""
        plan = self.plan(text, caller, channel)
        if plan.kind == "reply" or plan.step is None:
            assert plan.result is not None
            return plan.result
        return self.run(plan, self.context(plan.step, caller, channel, progress))
