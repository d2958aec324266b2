"""The one plugin host: finds /trace commands, runs them safely, never lets a plugin take tracebot down.

Built-in plugins are registered from :data:`BUILTIN_PLUGINS`; third-party packages add theirs through
the entry-point group ``tracebot.plugins`` (so ``pip install`` of a package adds its commands). Every
failure to import, register or run a plugin becomes a recorded load error or an error :class:`Result`.

Callers (the Slack layer, ``tracebot trace``) use::

    host = default_host()
    host.get_commands()                    # {"pid": Command, "job": Command, ...}
    host.run_command("pid", ctx, ["4242"]) # always a Result, within the command's time limit
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import logging
import os
import re
import threading
import time
from collections.abc import Iterable
from typing import Any

import pluggy

from tracebot import hookspecs
from tracebot.hookspecs import PROJECT
from tracebot.plugin_api import Command, CommandContext, NotAllowed, UsageError
from tracebot.result import Match, Result, Section

log = logging.getLogger(__name__)

BUILTIN_PLUGINS: tuple[str, ...] = ("tracebot.plugins.pyspy", "tracebot.plugins.slurm", "tracebot.plugins.sagemaker")
ENTRY_POINT_GROUP = "tracebot.plugins"
# Set to "0" to skip third-party plugins (tests do this; so can an admin chasing a bad plugin).
ENTRY_POINTS_ENV = "TRACEBOT_LOAD_ENTRYPOINTS"

_COMMAND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
# Token shapes that must never reach Slack or a log even if an exception message carries one.
_SECRET_SHAPES = re.compile(r"xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|(?<![A-Z0-9])AKIA[A-Z0-9]{16}")
_MAX_ERROR_CHARS = 300


class PluginHost:
    """A pluggy manager named ``tracebot`` plus the bookkeeping that keeps bad plugins contained."""

    def __init__(self, builtins: Iterable[str] = BUILTIN_PLUGINS, entry_points: bool | None = None) -> None:
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._errors: list[str] = []
        self._commands: dict[str, Command] | None = None
        self._command_errors: list[str] = []
        for module_name in builtins:
            self._load_module(module_name)
        if entry_points is None:
            entry_points = os.environ.get(ENTRY_POINTS_ENV, "1") != "0"
        if entry_points:
            self._load_entry_points()

    # -- loading -----------------------------------------------------------------------------------
    def _load_module(self, module_name: str) -> None:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # a half-written or broken plugin must not stop the others
            self._record(f"plugin {module_name} failed to import: {_describe(exc)}", exc)
            return
        self.register(module, name=module_name)

    def _load_entry_points(self) -> None:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if self.pm.get_plugin(ep.name) is not None or self.pm.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
            except Exception as exc:
                self._record(f"plugin {ep.name} ({ep.value}) failed to load: {_describe(exc)}", exc)
                continue
            self.register(plugin, name=ep.name)

    def register(self, plugin: object, name: str | None = None) -> bool:
        """Register ``plugin``; a plugin pluggy refuses is recorded as a load error, not raised."""
        label = name or getattr(plugin, "__name__", repr(plugin))
        try:
            self.pm.register(plugin, name=name)
            # A misspelled hook name only shows up here; undo the registration so the rest keeps working.
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            self._record(f"plugin {label} failed to register: {_describe(exc)}", exc)
            return False
        self._commands = None
        return True

    def unregister(self, plugin: object | None = None, name: str | None = None) -> None:
        self.pm.unregister(plugin=plugin, name=name)
        self._commands = None

    def _record(self, message: str, exc: BaseException | None = None) -> None:
        log.error("%s", message, exc_info=exc)
        self._errors.append(message)

    def load_errors(self) -> list[str]:
        """Problems met while loading plugins and collecting their commands, oldest first."""
        self.get_commands()
        return [*self._errors, *self._command_errors]

    # -- commands ----------------------------------------------------------------------------------
    def get_commands(self) -> dict[str, Command]:
        """All commands by name. Built-ins win a name clash (they are registered first)."""
        if self._commands is not None:
            return self._commands
        commands: dict[str, Command] = {}
        errors: list[str] = []
        # get_hookimpls() lists plugins in registration order: built-ins first, so they win a clash.
        for impl in self.pm.hook.register_commands.get_hookimpls():
            try:
                provided = impl.function()
            except Exception as exc:
                errors.append(f"plugin {impl.plugin_name} failed to list its commands: {_describe(exc)}")
                log.exception("register_commands of %s raised", impl.plugin_name)
                continue
            for cmd in provided or []:
                problem = _command_problem(cmd)
                if problem is None and cmd.name in commands:
                    problem = f"command {cmd.name!r} is already provided by another plugin"
                if problem:
                    errors.append(f"plugin {impl.plugin_name}: {problem}")
                    continue
                commands[cmd.name] = cmd
        self._commands, self._command_errors = commands, errors
        for message in errors:
            log.error("%s", message)
        return commands

    def help_result(self) -> Result:
        """What ``/trace help`` shows: every command's usage and help, and plugins that failed."""
        commands = self.get_commands()
        lines = [f"`{c.usage}`  {c.help}" + ("  (admins only)" if c.admin_only else "")
                 for c in sorted(commands.values(), key=lambda c: c.name)]
        sections = [Section("Commands", "\n".join(lines) or "No commands are installed.")]
        errors = self.load_errors()
        if errors:
            sections.append(Section("Plugins that failed to load", "\n".join(errors)))
        return Result(title="/trace help", summary=f"{len(commands)} commands available.",
                      status="info", sections=sections)

    def run_command(self, name: str, ctx: CommandContext, words: list[str]) -> Result:
        """Parse, authorize and run one command within its time limit. Always returns a Result."""
        if name in ("", "help"):
            return self.help_result()
        commands = self.get_commands()
        cmd = commands.get(name)
        if cmd is None:
            known = ", ".join(sorted(commands)) or "none installed"
            return _usage_result(f"/trace {name[:40]}", f"Unknown command {name[:40]!r}. Commands: {known}.",
                                 "/trace help")
        title = f"/trace {cmd.name}"
        if cmd.admin_only and not ctx.caller.is_admin:
            return _error_result(title, f"`/trace {cmd.name}` is for admins only.", kind="not_allowed")
        try:
            kwargs = cmd.parse(list(words))
        except UsageError as exc:
            return _usage_result(title, str(exc), cmd.usage)
        except Exception as exc:
            log.exception("parse of %s raised", cmd.name)
            return _error_result(title, f"{cmd.name} could not read its arguments: {_scrub(exc, ctx)}")
        deadline = min(ctx.deadline, time.monotonic() + cmd.timeout_s)
        run_ctx = dataclasses.replace(ctx, deadline=deadline)
        outcome = _run_with_deadline(cmd, run_ctx, kwargs)
        if isinstance(outcome, Result):
            return outcome
        if outcome is None:
            return _error_result(title, f"`/trace {cmd.name}` did not finish within its time limit "
                                 f"({cmd.timeout_s:g}s); nothing was returned.", kind="timeout")
        if isinstance(outcome, UsageError):
            return _usage_result(title, str(outcome), cmd.usage)
        if isinstance(outcome, NotAllowed):
            return _error_result(title, str(outcome), kind="not_allowed")
        log.error("command %s raised", cmd.name, exc_info=outcome)
        return _error_result(title, f"`/trace {cmd.name}` failed: {_scrub(outcome, ctx)}")


def _run_with_deadline(cmd: Command, ctx: CommandContext, kwargs: dict[str, Any]) -> Result | BaseException | None:
    """Run in a daemon thread and stop waiting at the deadline (``None``): a stuck plugin can't hold us."""
    box: list[Result | BaseException] = []

    def target() -> None:
        try:
            result = cmd.run(ctx, **kwargs)
            if not isinstance(result, Result):
                raise TypeError(f"returned {type(result).__name__}, not a Result")
            box.append(result)
        except BaseException as exc:  # reported to the caller, never lost in the thread
            box.append(exc)

    worker = threading.Thread(target=target, name=f"trace-{cmd.name}", daemon=True)
    worker.start()
    worker.join(timeout=max(0.0, ctx.deadline - time.monotonic()))
    return box[0] if box else None


def attach_matches(result: Result, ctx: CommandContext, text: str, confident_only: bool = True) -> Result:
    """Run the matcher over what a plugin found (log errors, a FailureReason, stacks) and add the entries.

    Matches already on the result are kept; an entry found again keeps its higher score. Without a
    knowledge base (``ctx.matcher is None``) or if the matcher fails, a note says so instead.
    """
    notes = result.data.setdefault("notes", [])
    if ctx.matcher is None:
        if "knowledge base not loaded: no knowledge entries were matched" not in notes:
            notes.append("knowledge base not loaded: no knowledge entries were matched")
        return result
    if not text.strip():
        return result
    try:
        diagnosis = ctx.matcher.diagnose(text)
    except Exception as exc:
        log.exception("matcher failed on plugin output")
        notes.append(f"knowledge matching failed: {_scrub(exc, ctx)}")
        return result
    by_id: dict[str, Match] = {m.entry_id: m for m in result.matches}
    for match in diagnosis.matches:
        if confident_only and not match.confident:
            continue
        old = by_id.get(match.entry_id)
        if old is None or match.score > old.score:
            by_id[match.entry_id] = match
    result.matches = sorted(by_id.values(), key=lambda m: (not m.confident, -m.score))
    return result


def _command_problem(cmd: object) -> str | None:
    if not isinstance(cmd, Command):
        return f"register_commands returned {type(cmd).__name__}, not a Command"
    if not _COMMAND_NAME.match(cmd.name):
        return f"command name {cmd.name!r} must match {_COMMAND_NAME.pattern}"
    if cmd.name == "help":
        return "the command name 'help' is reserved"
    if not callable(cmd.parse) or not callable(cmd.run):
        return f"command {cmd.name!r} needs callable parse and run"
    return None


def _usage_result(title: str, message: str, usage: str) -> Result:
    return Result(title=title, summary=f"{message}\nUsage: `{usage}`", status="error",
                  data={"error": "usage", "usage": usage})


def _error_result(title: str, message: str, kind: str = "failed") -> Result:
    return Result(title=title, summary=message, status="error", data={"error": kind})


def _describe(exc: BaseException, secrets: Iterable[str | None] = ()) -> str:
    """``Type: message`` with secrets and token-shaped strings removed, then trimmed."""
    text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return _SECRET_SHAPES.sub("[redacted]", text)[:_MAX_ERROR_CHARS]


def _scrub(exc: BaseException, ctx: CommandContext) -> str:
    cfg = ctx.config
    return _describe(exc, (cfg.slack_bot_token, cfg.slack_signing_secret, cfg.slack_app_token))


_default: PluginHost | None = None
_default_lock = threading.Lock()


def default_host() -> PluginHost:
    """The process-wide host, built on first use (built-ins + entry points unless switched off)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = PluginHost()
        return _default


def get_commands() -> dict[str, Command]:
    return default_host().get_commands()


def load_errors() -> list[str]:
    return default_host().load_errors()


def run_command(name: str, ctx: CommandContext, words: list[str]) -> Result:
    return default_host().run_command(name, ctx, words)
