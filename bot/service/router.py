"""Turn ``/trace <words>`` into a plan: answer now, diagnose a text, or run a plugin command.

Built-ins: ``help``, ``diagnose <text>``, ``kb <search>``, ``config [auto-reply on|off] [threshold N]``.
Anything else is a plugin command from :mod:`tracebot.service.plugin_host` (``/trace job 123``). Parsing and
permission checks happen here, before anything is queued, so a typo is answered at once and never
occupies the job pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tracebot.plugin_api import Caller, CommandContext, UsageError
from tracebot.result import Result, Section
from tracebot.service import builtin_commands as builtin

BUILTINS: dict[str, tuple[str, str]] = {
    "help": ("/trace help", "What tracebot can do here."),
    "diagnose": ("/trace diagnose <error text>", "Match a pasted error against the knowledge base."),
    "kb": ("/trace kb <words>", "Search the knowledge base."),
    "config": (
        "/trace config [auto-reply on|off] [threshold N]",
        "Show or change this channel's settings (admins only).",
    ),
}


@dataclass
class Plan:
    """``reply``: ``result`` is the whole answer. ``diagnose``: match ``text``. ``run``: a plugin command."""

    kind: Literal["reply", "diagnose", "run"]
    label: str  # what the user asked for, e.g. "job 123"
    result: Result | None = None
    text: str = ""
    command: str = ""
    words: list[str] = field(default_factory=list)
    key: str | None = None  # running work with the same key is shared
    timeout_s: float = 120.0


class TraceRouter:
    def __init__(self, host: Any, store: Any, knowledge: Any, config: Any) -> None:
        self.host = host  # tracebot.service.plugin_host.PluginHost
        self.store = store
        self.knowledge = knowledge
        self.config = config

    def command_names(self) -> list[str]:
        return [*BUILTINS, *sorted(self.host.get_commands())]

    def plan(self, text: str, caller: Caller, channel: str) -> Plan:
        words = text.split()
        name = words[0].lower() if words else "help"
        args = words[1:]
        label = " ".join(words) or "help"
        if name == "help":
            return Plan("reply", label, result=self.help())
        if name == "diagnose":
            body = text.strip()[len(words[0]) :].strip() if words else ""
            if not body:
                return Plan("reply", label, result=_usage("diagnose", "Paste the error after `diagnose`."))
            return Plan("diagnose", "diagnose", text=body)
        if name == "kb":
            return Plan("reply", label, result=builtin.kb_search(self.knowledge, " ".join(args)))
        if name == "config":
            return Plan("reply", label, result=builtin.config(self.store, self.config, caller, channel, args))
        return self._plugin_plan(name, args, caller, label)

    def _plugin_plan(self, name: str, args: list[str], caller: Caller, label: str) -> Plan:
        cmd = self.host.get_commands().get(name)
        if cmd is None:
            known = ", ".join(self.command_names())
            return Plan(
                "reply", label, result=_usage(name, f"Unknown command `{name[:40]}`. Commands: {known}.")
            )
        if cmd.admin_only and not caller.is_admin:
            return Plan("reply", label, result=_error(name, f"`/trace {name}` is for admins only."))
        try:
            parsed = cmd.parse(list(args))
        except UsageError as exc:
            return Plan("reply", label, result=_usage(name, f"{exc}\nUsage: `{cmd.usage}`"))
        except Exception as exc:  # a plugin's parser bug is the plugin's, reported like the host does
            return Plan("reply", label, result=_error(name, f"{name} could not read its arguments: {exc}"))
        key = cmd.dedupe_key(parsed) if cmd.dedupe_key else " ".join([name, *args])
        return Plan("run", label, command=name, words=list(args), key=f"cmd:{key}", timeout_s=cmd.timeout_s)

    def run(self, plan: Plan, ctx: CommandContext) -> Result:
        """Run a ``run`` plan (on the job pool); the host turns every failure into an error Result."""
        return self.host.run_command(plan.command, ctx, plan.words)

    def help(self) -> Result:
        plugin_help = self.host.help_result()
        lines = [f"`{usage}`  {text}" for usage, text in BUILTINS.values()]
        builtin_section = Section("Built in", "\n".join(lines))
        return Result(
            title="/trace help",
            summary="Paste an error in a channel I'm in and I answer in its thread when I'm confident; "
            "mention me or DM me to always get my best guesses. In threads, use the message shortcut "
            "*Diagnose with tracebot* or `@tracebot <command>`.",
            status="info",
            sections=[builtin_section, *plugin_help.sections],
        )


def _usage(name: str, message: str) -> Result:
    return Result(title=f"/trace {name}", summary=message, status="error", data={"error": "usage"})


def _error(name: str, message: str) -> Result:
    return Result(title=f"/trace {name}", summary=message, status="error", data={"error": "not_allowed"})
