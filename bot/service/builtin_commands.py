"""The built-in ``/trace`` commands: ``help``, ``diagnose``, ``kb`` and ``config``.

They are a plugin like any other, on the same ``register_commands`` hook, so they are listed, parsed,
authorised and run by the same host as ``/trace job``: Slack, the console and ``tracebot trace`` show
the same help and the same usage errors. They differ only in what they close over: the plugin host
(for ``help``), the knowledge holder (``kb``) and the store (``config``), which the router hands them.
"""

from __future__ import annotations

from typing import Any

from tracebot.config import Config, on_off
from tracebot.plugin_api import (
    SLACK_PREFIX,
    Command,
    CommandContext,
    Result,
    Section,
    Table,
    UsageError,
    code_span,
    hookimpl,
)
from tracebot.service.plugin_host import BUILTIN_COMMANDS

NAME = BUILTIN_COMMANDS  # its registration name; the host lists its commands first
ABOUT = (
    "Paste an error in a channel I'm in and I answer in its thread when I'm confident; mention me or DM "
    "me to always get my best guesses. In threads, use the message shortcut *Diagnose with tracebot* or "
    "`@tracebot <command>`."
)
# The same commands from a terminal: what differs there is how they are typed, and how a log is diagnosed.
ABOUT_TERMINAL = (
    "Run each command here as `tracebot trace <command>` (in Slack: `/trace <command>`). To diagnose "
    "a log or a pasted error from a terminal: `tracebot diagnose FILE` (or standard input)."
)

UNAVAILABLE = "Some commands are unavailable: a plugin did not load. Ask an admin."


class BuiltinCommands:
    """The built-in commands of one router. ``store`` is None where there is no channel (a terminal)."""

    def __init__(self, host: Any, knowledge: Any, store: Any, config: Config) -> None:
        self.host = host
        self.knowledge = knowledge
        self.store = store
        self.config = config

    @hookimpl
    def register_commands(self) -> list[Command]:
        return [
            Command("help", "/trace help", "What tracebot can do here.", parse=_no_words, run=self.help,
                    quick=True, timeout_s=10),
            Command("diagnose", "/trace diagnose <error text>", "Match a pasted error against the knowledge base.",
                    parse=_text, run=self.diagnose, takes_text=True, timeout_s=60),
            Command("kb", "/trace kb <words>", "Search the knowledge base.", parse=_query, run=self.kb,
                    quick=True, timeout_s=10),
            Command("config", "/trace config [auto-reply on|off] [threshold N]",
                    "Show or change this channel's settings (admins only).", parse=_settings, run=self.channel_config,
                    quick=True, timeout_s=10),
        ]

    # -- help -----------------------------------------------------------------------------------------
    def help(self, ctx: CommandContext) -> Result:
        commands = self.host.get_commands()

        def lines(builtin: bool) -> str:
            return "\n".join(
                f"`{ctx.typed(c.usage)}`  {c.help}" + ("  (admins only)" if c.admin_only else "")
                for c in sorted(commands.values(), key=lambda c: c.name)
                if (c.plugin == NAME) == builtin
            )

        sections = [Section("Built in", lines(True)), Section("Commands", lines(False) or "No commands are installed.")]
        errors = self.host.load_errors()
        # Help is answered where it was asked, in front of the channel; a load error holds a traceback's
        # words and the plugin's path on the server, which are for admins (App Home shows them the same way).
        if errors and ctx.caller.is_admin:
            sections.append(Section("Plugins that failed to load", "\n".join(errors)))
        elif errors:
            sections.append(Section("Unavailable", UNAVAILABLE))
        about = ABOUT if ctx.typed_as == SLACK_PREFIX else ABOUT_TERMINAL
        return Result(title=ctx.typed("/trace help"), summary=about, status="info", sections=sections)

    # -- diagnose -------------------------------------------------------------------------------------
    def diagnose(self, ctx: CommandContext, text: str) -> Result:
        """In Slack the service posts this as an answer (with feedback buttons); elsewhere it is a Result."""
        diagnosis = ctx.match(text, confident_only=False)
        best = diagnosis.confident[0].title if diagnosis.confident else None
        summary = f"Best match: {best}." if best else "Nothing matched with confidence."
        return Result(title=ctx.typed("/trace diagnose"), summary=summary, status="info", diagnosis=diagnosis,
                      data={"notes": list(diagnosis.notes)} if diagnosis.notes else {})

    # -- kb -------------------------------------------------------------------------------------------
    def kb(self, ctx: CommandContext, query: str) -> Result:
        kb = self.knowledge.kb if self.knowledge is not None else None
        if kb is None:
            return Result(title=ctx.typed("/trace kb"), summary="The knowledge base is not loaded.", status="error")
        if not query:
            tags: dict[str, int] = {}
            for e in kb.entries:
                for t in e.tags or ["untagged"]:
                    tags[t] = tags.get(t, 0) + 1
            rows = [[t, str(n)] for t, n in sorted(tags.items())]
            return Result(title=ctx.typed("/trace kb"), summary=f"{len(kb.entries)} entries. Search with `{ctx.typed('/trace kb <words>')}`.",
                          status="info", tables=[Table("Entries by tag", ["tag", "entries"], rows)])
        found = self.knowledge.matcher.search(query, limit=5)
        if not found:
            return Result(title=ctx.typed(f"/trace kb {query}"), summary="No entry matches those words.", status="info")
        sections = [Section(f"{m.title} ({m.entry_id})", m.summary + (f"\nFix: {m.fix[0]}" if m.fix else ""))
                    for m in found]
        return Result(title=ctx.typed(f"/trace kb {query}"), summary=f"{len(found)} entries found.", status="info",
                      sections=sections)

    # -- config ---------------------------------------------------------------------------------------
    def channel_config(self, ctx: CommandContext, changes: dict[str, Any]) -> Result:
        """Show or change the channel's settings. Admins only (``TRACEBOT_ADMINS`` / the config file)."""
        if not ctx.caller.is_admin:
            return Result(title=ctx.typed("/trace config"), summary="Only tracebot admins can view or change channel settings.",
                          status="error", data={"error": "not_allowed"})
        if self.store is None or not ctx.channel:
            return Result(title=ctx.typed("/trace config"), summary="Channel settings are set in Slack, in the channel, with `/trace config`.",
                          status="error", data={"error": "usage"})
        settings = (
            self.store.update_channel_settings(ctx.channel, updated_by=ctx.caller.slack_user or "?", **changes)
            if changes
            else self.store.channel_settings(ctx.channel)
        )
        threshold = settings.threshold if settings.threshold is not None else self.config.confidence_threshold
        allowed = self.config.channels.may_auto_reply(ctx.channel)
        rows = [
            ["auto-reply", ("on" if settings.auto_reply else "off") if allowed
             else "off (not one of TRACEBOT_CONFIG's channels.auto_reply)"],
            ["/trace", "runs here" if self.config.channels.may_trace(ctx.channel)
             else "not here (not one of TRACEBOT_CONFIG's channels.trace)"],
            ["threshold", f"{threshold:g}" + ("" if settings.threshold is not None else " (default)")],
        ]
        return Result(
            title=ctx.typed("/trace config"),
            summary="Updated." if changes else "Settings for this channel.",
            status="ok" if changes else "info",
            tables=[Table("Channel settings", ["setting", "value"], rows)],
            data={"auto_reply": settings.auto_reply and allowed, "threshold": threshold},
        )


def _no_words(words: list[str]) -> dict[str, Any]:
    return {}


def _text(words: list[str]) -> dict[str, Any]:
    text = words[0].strip() if words else ""
    if not text:
        raise UsageError("Paste the error after `diagnose`.")
    return {"text": text}


def _query(words: list[str]) -> dict[str, Any]:
    return {"query": " ".join(words)}  # as typed: Service.on_command undid Slack's markup


def _on_off(word: str) -> bool:
    try:
        return on_off(word, "the value")
    except ValueError:
        raise UsageError(f"expected on or off, got {word[:20]!r}") from None


def _settings(words: list[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if len(words) % 2:
        raise UsageError(f"{code_span(words[-1][:20])} needs a value")
    for key, value in zip(words[::2], words[1::2], strict=True):
        if key.lower() in ("auto-reply", "autoreply", "auto_reply"):
            changes["auto_reply"] = _on_off(value)
        elif key.lower() == "threshold":
            try:
                threshold = float(value)
            except ValueError:
                raise UsageError(f"threshold must be a number, got {value[:20]!r}") from None
            if not 0 <= threshold <= 100:
                raise UsageError("threshold must be between 0 and 100")
            changes["threshold"] = threshold
        else:
            raise UsageError(f"unknown setting {code_span(key[:30])}")
    return {"changes": changes}
