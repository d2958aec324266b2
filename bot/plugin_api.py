"""Everything a /trace plugin sees. Plugins import this module (and ``from tracebot import hookimpl``),
never the service, the renderers or the matcher's internals.

A plugin is a module (or object) with ``@hookimpl`` functions named after the hook specs in
:mod:`tracebot.hookspecs`; ``register_commands`` returns :class:`Command` objects. Built-ins are
registered from an explicit list in :mod:`tracebot.service.plugin_host`; third-party packages add
theirs through the entry-point group ``tracebot.plugins``.

A command's ``run(ctx, **parsed)`` gets a :class:`CommandContext`: who asked, this plugin's own section
of ``TRACEBOT_CONFIG`` (never Slack tokens), a deadline, a progress callback, ``ctx.match(text)``
(the knowledge base's :class:`Diagnosis` of a text) and ``ctx.scan_log(path)`` (the first errors of a
log file of any size). It returns a :class:`Result` of plain data: sections in the neutral markup
(plain text with `code` and ```blocks```), tables, stack groups, attachments, and the ranked
``diagnosis``; each renderer (Slack, terminal, JSON) escapes and formats it.
"""

from __future__ import annotations

import logging
import pwd
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from tracebot.hookspecs import hookimpl
from tracebot.markup import code_span
from tracebot.procstat import proc_stat, start_time
from tracebot.ranks import first_few, format_ranks, is_rank_number, ranks_phrase
from tracebot.result import Attachment, Diagnosis, Frame, Match, Result, Section, StackGroup, Status, Table
from tracebot.secrets import scrub, without_secrets

if TYPE_CHECKING:
    from tracebot.matcher import Matcher
    from tracebot.matcher.logscan import ErrorLine, LogScan, regular_stream
    from tracebot.matcher.ranking import combine

log = logging.getLogger(__name__)
NO_KNOWLEDGE = "knowledge base not loaded: no knowledge entries were matched"

__all__ = [
    "Attachment", "Caller", "Command", "CommandContext", "Diagnosis", "ErrorLine", "Frame", "LogScan",
    "Match", "NotAllowed", "Result", "Section", "StackGroup", "Status", "Table", "UsageError", "combine", "combine_into",
    "SLACK_PREFIX", "as_typed", "code_span", "first_few", "format_ranks", "hookimpl", "is_rank_number", "proc_stat", "ranks_phrase", "regular_stream", "start_time",
    "without_secrets",
]

SLACK_PREFIX = "/trace"  # how a command is typed in Slack (and the console, which shows what Slack would)


def as_typed(line: str, typed_as: str) -> str:
    """A command line as a :class:`Command` writes it (``/trace job <jobid>``, Slack's form) as it is typed
    where ``typed_as`` starts commands (``tracebot trace job <jobid>`` in a terminal)."""
    if line == SLACK_PREFIX or line.startswith(SLACK_PREFIX + " "):
        return typed_as + line[len(SLACK_PREFIX):]
    return line


# The matcher's names are imported on first use (PEP 562), as tracebot.matcher does: code that needs only
# the plain data types (the SLURM node dump, started once per node of every traced job) must not pay
# for the log scanner's index and NumPy at start-up.
_FROM_MATCHER = {"ErrorLine": "logscan", "LogScan": "logscan", "open_regular": "logscan", "regular_stream": "logscan",
                 "scan_log": "logscan", "combine": "ranking"}


def __getattr__(name: str) -> Any:
    if name in _FROM_MATCHER:
        return getattr(import_module(f"tracebot.matcher.{_FROM_MATCHER[name]}"), name)
    raise AttributeError(f"module 'tracebot.plugin_api' has no attribute {name!r}")


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

    @property
    def cluster_uid(self) -> int | None:
        """The uid of ``cluster_user`` in this host's user database (None when unmapped or unknown here).

        Ownership is compared by uid, never by the name ``ps`` prints: ``ps -o user=`` cuts a name
        longer than 8 characters to ``longuse+``. A cluster shares one user database (LDAP, SSSD), so
        this uid is the user's on every node."""
        if not self.cluster_user:
            return None
        try:
            return pwd.getpwnam(self.cluster_user).pw_uid
        except KeyError:
            return None


def _ignore(_message: str) -> None:
    pass


@dataclass
class CommandContext:
    """What a running command may use. Built by the service (or ``tracebot trace``) for each run."""

    caller: Caller
    settings: dict[str, Any] = field(default_factory=dict)  # this plugin's section of TRACEBOT_CONFIG
    progress: Callable[[str], None] = _ignore
    deadline: float = field(default_factory=lambda: time.monotonic() + 120.0)
    channel: str | None = None  # where the command was typed (None in a terminal)
    matcher: Matcher | None = field(default=None, repr=False)  # behind match()/scan_log(); may be None
    secrets: list[str] = field(default_factory=list, repr=False)  # scrubbed from error messages
    # how a command is typed where this one was asked: "/trace" in Slack, "tracebot trace" in a terminal
    typed_as: str = SLACK_PREFIX

    def typed(self, line: str) -> str:
        """``line`` (``/trace job 123``) as the person who asked would type it (:func:`as_typed`)."""
        return as_typed(line, self.typed_as)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    @property
    def has_knowledge(self) -> bool:
        return self.matcher is not None

    def match(self, text: str, *, confident_only: bool = True) -> Diagnosis:
        """The knowledge entries ``text`` shows, ranked. Never raises: without a knowledge base, or when
        matching fails, the diagnosis is empty and its notes say why."""
        if self.matcher is None:
            return Diagnosis(notes=[NO_KNOWLEDGE])
        if not text.strip():
            return Diagnosis(threshold=self.matcher.threshold)
        try:
            found = self.matcher.diagnose(text)
        except Exception as exc:
            log.exception("matcher failed on plugin output")
            return Diagnosis(notes=[f"knowledge matching failed: {scrub(f'{type(exc).__name__}: {exc}', self.secrets)}"])
        return __getattr__("combine")([found], confident_only=confident_only)

    def scan_log(self, path: Path | str, *, budget_s: float = 20.0,
                 opener: Callable[[Path], BinaryIO] | None = None) -> LogScan:
        """The first errors of a log file of any size (streamed, bounded in time and memory), and the
        candidate lines for :meth:`match`. Never raises: ``LogScan.unreadable`` says why not.

        ``opener(path)`` returns the open file when it must be opened with other rights than tracebot's
        own (e.g. as the owner of a job); it raises :class:`OSError` with the reason when it cannot."""
        trigger = self.matcher.trigger if self.matcher is not None else None
        return __getattr__("scan_log")(Path(path), trigger, budget_s=budget_s,
                                       opener=opener or __getattr__("open_regular"))


def combine_into(result: Result, diagnoses: Iterable[Diagnosis]) -> Result:
    """Add ``diagnoses`` to what ``result`` already matched, in the one order (see :func:`combine`)."""
    parts = [result.diagnosis, *diagnoses] if result.diagnosis is not None else list(diagnoses)
    result.diagnosis = __getattr__("combine")(parts)
    notes = result.data.setdefault("notes", [])
    for note in result.diagnosis.notes:
        if note not in notes:
            notes.append(note)
    return result


@dataclass
class Command:
    """One ``/trace <name> ...`` command.

    ``parse`` turns the argument words into validated keyword arguments or raises :class:`UsageError`;
    ``run`` does the work and returns a :class:`Result`. ``run`` must honour ``ctx.deadline``.
    ``quick`` commands answer inside Slack's 3-second acknowledgement instead of in a thread;
    ``takes_text`` commands get the rest of the line, line breaks kept, as their one word.
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
    quick: bool = False
    takes_text: bool = False
    plugin: str = ""  # set by the plugin host: the name of the plugin that provides it
