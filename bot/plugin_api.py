"""What a /trace plugin implements. Plugins know nothing of Slack: they return :class:`tracebot.result.Result`.

A plugin is a module (or object) with ``@hookimpl``-decorated functions named after the hook specs in
:class:`TracebotSpecs`. Built-ins are registered from an explicit list in ``bot/plugin_host.py``;
third-party packages add theirs through the entry-point group ``tracebot.plugins``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracebot.hookspecs import (
    hookimpl as hookimpl,  # re-exported: plugins import it from here or from tracebot
)
from tracebot.result import Result

if TYPE_CHECKING:
    from tracebot.config import Config
    from tracebot.matcher import Matcher



class UsageError(ValueError):
    """Arguments refused before anything runs; the message is shown to the user as is."""


class NotAllowed(PermissionError):
    """The caller may not run this command on this target; the message is shown to the user."""


@dataclass
class Caller:
    """Who asked. ``cluster_user`` comes from the configured Slack-user -> cluster-user mapping."""

    slack_user: str | None = None
    cluster_user: str | None = None
    is_admin: bool = False


@dataclass
class CommandContext:
    caller: Caller
    config: Config
    matcher: Matcher | None
    progress: Callable[[str], None] = lambda _msg: None
    deadline: float = field(default_factory=lambda: time.monotonic() + 120.0)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Command:
    """One ``/trace <name> ...`` command.

    ``parse`` turns the argument words into validated keyword arguments or raises :class:`UsageError`;
    ``run`` does the work and returns a :class:`Result`. ``run`` must honour ``ctx.deadline``.
    """

    name: str
    usage: str  # the whole line as typed in Slack: "/trace job <jobid>"
    help: str
    parse: Callable[[list[str]], dict[str, Any]]
    run: Callable[..., Result]  # run(ctx, **parsed)
    timeout_s: float = 120.0
    admin_only: bool = False
    # A key for "same work already running": commands returning the same key share one run.
    dedupe_key: Callable[[dict[str, Any]], str] | None = None
