"""The one plugin host: finds /trace commands, parses and authorises them once, runs them safely, and
never lets a plugin take tracebot down.

Built-in plugins are registered from :data:`BUILTIN_PLUGINS` (and the service's own built-in commands,
``help``, ``diagnose``, ``kb`` and ``config``, on the same hook); third-party packages add theirs
through the entry-point group ``tracebot.plugins`` (so ``pip install`` of a package adds its commands).
Every failure to import, register or run a plugin becomes a recorded load error or an error
:class:`Result`.

Callers go through :class:`tracebot.service.router.Router`; the host's own steps are::

    host.get_commands()                        # {"pid": Command, "job": Command, ...}
    step = host.prepare("pid", ["4242"], caller)  # parsed and authorised, or an error Result
    host.run_prepared(step, ctx)                # always a Result, within the command's time limit
    host.run_command("pid", ctx, ["4242"])      # both at once
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import logging
import re
import threading
import time
from collections.abc import Iterable
from typing import Any

import pluggy

from tracebot import hookspecs
from tracebot.config import ENTRY_POINTS_ENV, env_switch
from tracebot.hookspecs import PROJECT
from tracebot.plugin_api import (
    SLACK_PREFIX,
    Caller,
    Command,
    CommandContext,
    NotAllowed,
    UsageError,
    as_typed,
)
from tracebot.result import Result
from tracebot.secrets import scrub

log = logging.getLogger(__name__)

BUILTIN_PLUGINS: tuple[str, ...] = ("tracebot.plugins.pyspy", "tracebot.plugins.slurm", "tracebot.plugins.sagemaker")
ENTRY_POINT_GROUP = "tracebot.plugins"
BUILTIN_COMMANDS = "tracebot.builtin"  # the service's own commands (help, diagnose, kb, config): listed first
# Set to "0" to skip third-party plugins (tests do this; so can an admin chasing a bad plugin).

_COMMAND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_MAX_ERROR_CHARS = 300


@dataclasses.dataclass
class Prepared:
    """A command whose arguments were parsed and whose caller was authorised (see :meth:`PluginHost.prepare`)."""

    command: Command
    kwargs: dict[str, Any]
    words: list[str]

    @property
    def key(self) -> str:
        """Work with the same key is shared while it runs (``/trace job 123`` asked twice)."""
        cmd = self.command
        return "cmd:" + (cmd.dedupe_key(self.kwargs) if cmd.dedupe_key else " ".join([cmd.name, *self.words]))


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
            entry_points = env_switch(ENTRY_POINTS_ENV, True)  # "off" left them on when only "0" was read
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
        # get_hookimpls() lists plugins in registration order: built-ins first, so they win a clash; the
        # service's own commands come before every plugin's.
        impls = sorted(self.pm.hook.register_commands.get_hookimpls(), key=lambda i: i.plugin_name != BUILTIN_COMMANDS)
        for impl in impls:
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
                commands[cmd.name] = dataclasses.replace(cmd, plugin=impl.plugin_name)
        self._commands, self._command_errors = commands, errors
        for message in errors:
            log.error("%s", message)
        return commands

    def prepare(self, name: str, words: list[str], caller: Caller, *, typed_as: str = SLACK_PREFIX) -> Prepared | Result:
        """Find, authorise and parse one command: a :class:`Prepared` step, or the error to show, naming
        commands as they are typed where this one was (``typed_as``: "/trace", "tracebot trace")."""
        commands = self.get_commands()
        cmd = commands.get(name)
        if cmd is None:
            known = ", ".join(sorted(commands)) or "none installed"
            return _usage_result(f"{typed_as} {name[:40]}", f"Unknown command `{name[:40]}`. Commands: {known}.",
                                 f"{typed_as} help")
        title = f"{typed_as} {cmd.name}"
        if cmd.admin_only and not caller.is_admin:
            return _error_result(title, f"`{title}` is for admins only.", kind="not_allowed")
        try:
            kwargs = cmd.parse(list(words))
        except UsageError as exc:
            return _usage_result(title, str(exc), as_typed(cmd.usage, typed_as))
        except Exception as exc:  # a plugin's parser bug is the plugin's, reported like a run failure
            log.exception("parse of %s raised", cmd.name)
            return _error_result(title, f"{cmd.name} could not read its arguments: {_describe(exc)}")
        return Prepared(cmd, kwargs, list(words))

    def run_prepared(self, step: Prepared, ctx: CommandContext) -> Result:
        """Run a prepared command within its time limit. Always returns a Result."""
        cmd = step.command
        title = f"{ctx.typed_as} {cmd.name}"
        deadline = min(ctx.deadline, time.monotonic() + cmd.timeout_s)
        run_ctx = dataclasses.replace(ctx, deadline=deadline)
        outcome = _run_with_deadline(cmd, run_ctx, step.kwargs)
        if isinstance(outcome, Result):
            return outcome
        if outcome is None:
            return _error_result(title, f"`{title}` did not finish within its time limit "
                                 f"({cmd.timeout_s:g}s); nothing was returned.", kind="timeout")
        if isinstance(outcome, UsageError):
            return _usage_result(title, str(outcome), ctx.typed(cmd.usage))
        if isinstance(outcome, NotAllowed):
            return _error_result(title, str(outcome), kind="not_allowed")
        log.error("command %s raised", cmd.name, exc_info=outcome)
        return _error_result(title, f"`{title}` failed: {_describe(outcome, ctx.secrets)}")

    def run_command(self, name: str, ctx: CommandContext, words: list[str]) -> Result:
        """Prepare and run one command (what ``tracebot trace`` and the plugin tests use)."""
        step = self.prepare(name or "help", words, ctx.caller, typed_as=ctx.typed_as)
        return step if isinstance(step, Result) else self.run_prepared(step, ctx)


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


def _command_problem(cmd: object) -> str | None:
    if not isinstance(cmd, Command):
        return f"register_commands returned {type(cmd).__name__}, not a Command"
    if not _COMMAND_NAME.match(cmd.name):
        return f"command name {cmd.name!r} must match {_COMMAND_NAME.pattern}"
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
    return scrub(f"{type(exc).__name__}: {exc}", secrets)[:_MAX_ERROR_CHARS]


def config_section(plugin_name: str) -> str:
    """The TRACEBOT_CONFIG section a plugin reads: ``tracebot.plugins.slurm`` -> ``slurm``."""
    return plugin_name.rsplit(".", 1)[-1] if plugin_name.startswith("tracebot.") else plugin_name


_default: PluginHost | None = None
_default_lock = threading.Lock()


def default_host() -> PluginHost:
    """The process-wide host, built on first use (built-ins + entry points unless switched off)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = PluginHost()
        return _default
