"""``tracebot console``: tracebot's Slack handlers in a terminal, with no Slack.

Paste an error and see exactly what tracebot would post (Block Kit rendered as text), run ``/trace
...``, click buttons. The same :class:`~tracebot.service.service.Service` runs behind Slack; only the
:class:`ConsoleOutbox` differs. Reading a whole conversation from standard input makes it scriptable::

    printf '/trace help\\n' | tracebot console

Input: a message is one or more lines ended by a line ``---`` (or, at a terminal, an empty line) or the
end of input; one starting with ``@tracebot`` is a mention. A line starting with ``/`` is a command of
its own (``/trace ...``, ``/click helpful``...; other lines starting with ``/``, like paths, are text).
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tracebot.markup import as_slack_sends
from tracebot.matcher.scan import looks_like_text
from tracebot.render import html
from tracebot.render.blocks_text import blocks_to_text
from tracebot.render.slack import ACTION_HELPFUL, ACTION_NOT_THIS, ACTION_WHY
from tracebot.service.inbound import Click, FileRef, Inbound, SlashCommand
from tracebot.service.outbox import DownloadTooLarge
from tracebot.service.service import Service

HELP = """\
Paste text (end with a line --- or, at a terminal, an empty line) and see what tracebot would post.
  /trace <command>        run a /trace command (try /trace help)
  @tracebot <text>        mention tracebot: always answers
  /dm <text>              a direct message to tracebot
  /shortcut               "Diagnose with tracebot" on the last message
  /attach <path>          attach a local log file (plain or .gz) to the next message
  /thread                 post the next messages in the thread of the last one (again: leave it)
  /click helpful|not-this|why    press a button on the last answer
  /home                   show the App Home tab
  /help, /quit"""

COMMANDS = {"/trace", "/dm", "/shortcut", "/attach", "/thread", "/click", "/home", "/help", "/quit", "/exit"}
CLICKS = {"helpful": ACTION_HELPFUL, "not-this": ACTION_NOT_THIS, "why": ACTION_WHY}


@dataclass
class Posted:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None = None


class ConsoleOutbox:
    """Prints what would be posted; keeps it so a console session (or a test) can look back."""

    def __init__(self, out: TextIO, clock: Callable[[], float] = time.time) -> None:
        self.out = out
        self._clock = clock
        self._last_us = 0
        self._ts_lock = threading.Lock()
        self.posted: list[Posted] = []
        # Everything said, as a reader would see it (``--html``): posts edited in place, ephemerals, files.
        self.shown: list[html.Shown] = []
        self._shown_by_ts: dict[str, html.Shown] = {}
        self._shown_lock = threading.Lock()

    def show(self, shown: html.Shown) -> None:
        with self._shown_lock:
            self.shown.append(shown)
            self._shown_by_ts.setdefault(shown.ts, shown)

    def next_ts(self) -> str:
        """A Slack-style ts from the real clock, strictly increasing. The store remembers every message
        it answered by channel and ts, so a second console session must never reuse the first one's."""
        with self._ts_lock:
            self._last_us = max(self._last_us + 1, int(self._clock() * 1_000_000))
            return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    def _print(self, header: str, body: str) -> None:
        self.out.write(f"── {header} ──\n{body.rstrip()}\n\n")
        self.out.flush()

    def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
    ) -> str:
        ts = self.next_ts()
        self.posted.append(Posted(channel, ts, text, blocks or [], thread_ts))
        self.show(html.Shown("tracebot", ts, text, list(blocks or []), thread_ts))
        where = f"#{channel}" + (f" (thread {thread_ts})" if thread_ts else "")
        self._print(f"tracebot → {where} [{ts}]", blocks_to_text(blocks or [], text))
        return ts

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        with self._shown_lock:
            earlier = self._shown_by_ts.get(ts)
            if earlier is not None:  # Slack shows the edit in place
                earlier.text, earlier.blocks, earlier.edited = text, list(blocks or []), True
        self._print(f"tracebot edits [{ts}]", blocks_to_text(blocks or [], text))

    def ephemeral(
        self,
        channel: str,
        user: str,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
    ) -> None:
        self.show(html.Shown("tracebot", self.next_ts(), text, list(blocks or []), thread_ts, only_visible_to=user))
        self._print(f"tracebot → only visible to {user}", blocks_to_text(blocks or [], text))

    def upload(self, channel: str, thread_ts: str | None, filename: str, content: bytes, title: str) -> None:
        if looks_like_text(content[:400]):
            shown = content[:400].decode("utf-8", "replace") + ("\n…" if len(content) > 400 else "")
        else:  # a picture (ranks.png): its bytes would be noise, and control characters, in a terminal
            shown = f"({title or filename}: not text, so not shown here)"
        self.show(html.Shown("tracebot", self.next_ts(), thread_ts=thread_ts,
                             files=[html.FileCard(filename, title, len(content))]))
        self._print(f"tracebot uploads {filename} ({len(content):,} bytes) → #{channel} (thread {thread_ts})", shown)

    def permalink(self, channel: str, ts: str) -> str:
        return f"console://{channel}/{ts}"

    def respond(self, response_url: str, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        self.ephemeral("(response_url)", "you", text, blocks)

    def open_dm(self, user: str) -> str:
        return f"D{user}"

    def members(self, channel: str) -> set[str] | None:
        return None  # one person at the terminal: the App Home shows them their own diagnoses

    def publish_home(self, user: str, view: dict[str, Any]) -> None:
        self.show(html.Shown("tracebot", self.next_ts(), "App Home", list(view.get("blocks", [])),
                             only_visible_to=f"{user} (App Home)"))
        self._print(f"App Home of {user}", blocks_to_text(view.get("blocks", [])))

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        """In the console a file "URL" is a local path given with /attach."""
        src = Path(url)
        size = src.stat().st_size
        if size > max_bytes:
            raise DownloadTooLarge(max_bytes)
        shutil.copyfile(src, dest)
        return size


@dataclass
class Session:
    tracebot: Service
    outbox: ConsoleOutbox
    out: TextIO
    channel: str = "C0CONSOLE"
    user: str = "U0CONSOLE"
    in_thread: str | None = None
    last: Inbound | None = None
    attachments: list[FileRef] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.out.write(text.rstrip() + "\n\n")
        self.out.flush()

    def settle(self) -> None:
        if not self.tracebot.wait_idle(timeout=600):
            self.say("(still working; its answer will appear when it is done)")

    def message(self, text: str, *, channel_type: str = "channel") -> None:
        channel = self.channel if channel_type == "channel" else "D0CONSOLE"
        msg = Inbound(
            channel=channel,
            user=self.user,
            ts=self.outbox.next_ts(),
            text=as_slack_sends(text),  # typed here, read as Slack delivers it: plain_text gives it back as typed
            thread_ts=self.in_thread,
            files=self.attachments,
            channel_type=channel_type,
        )
        self.attachments = []
        self.last = msg
        lines = text.count("\n") + 1 if text else 0
        files = f", {len(msg.files)} file(s)" if msg.files else ""
        self.say(f"── you → #{channel} [{msg.ts}]: {lines} line(s){files} ──")
        self.outbox.show(html.Shown(self.user, msg.ts, text, thread_ts=msg.thread_ts, plain=True,
                                    files=[html.FileCard(f.name, f.name, f.size or 0) for f in msg.files]))
        before = len(self.outbox.posted)
        if text.startswith("@tracebot"):
            msg.text = as_slack_sends(text[len("@tracebot") :])
            self.tracebot.on_direct(msg, "mention")
        else:
            self.tracebot.on_message(msg)
        self.settle()
        if len(self.outbox.posted) == before:
            self.say("(tracebot says nothing: no confident match, or auto-reply is off in this channel)")

    def command(self, line: str) -> bool:
        """Run one ``/...`` line; False to quit."""
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.say(HELP)
        elif name == "/trace":
            reply = self.tracebot.on_command(SlashCommand(channel=self.channel, user=self.user, text=as_slack_sends(rest)))
            if reply is not None:
                self.outbox.ephemeral(self.channel, self.user, reply[0], reply[1])
            self.settle()
        elif name == "/dm":
            self.message(rest, channel_type="im")
        elif name == "/shortcut":
            if self.last is None:
                self.say("(no message yet)")
            else:
                self.tracebot.on_direct(self.last, "shortcut", keys=[f"shortcut:{self.outbox.next_ts()}"])
                self.settle()
        elif name == "/attach":
            path = Path(rest).expanduser()
            if not path.is_file():
                self.say(f"(no such file: {path})")
            else:
                self.attachments.append(
                    FileRef(path.name, str(path), path.stat().st_size, "text/plain", "text")
                )
                self.say(
                    f"(attached {path.name}; it goes with the next message — end with --- to send it alone)"
                )
        elif name == "/thread":
            self.in_thread = None if self.in_thread else (self.last.thread_root if self.last else None)
            self.say(
                f"(posting in thread {self.in_thread})" if self.in_thread else "(posting in the channel)"
            )
        elif name == "/click":
            self._click(rest)
        elif name == "/home":
            self.tracebot.on_home_opened(self.user)
        else:
            self.say(f"(unknown console command {name}; /help lists them)")
        return True

    def _click(self, which: str) -> None:
        action = CLICKS.get(which)
        answers = [p for p in self.outbox.posted if any(b.get("type") == "actions" for b in p.blocks)]
        if action is None or not answers:
            self.say("(usage: /click helpful|not-this|why, after an answer with buttons)")
            return
        answer = answers[-1]
        values = {
            e["action_id"]: e["value"] for b in answer.blocks if b["type"] == "actions" for e in b["elements"]
        }
        if action not in values:
            self.say("(that answer has no such button)")
            return
        self.tracebot.on_click(
            Click(action, values[action], self.user, answer.channel, answer.ts, answer.thread_ts)
        )
        self.settle()


def turns(lines: Iterable[str], interactive: bool) -> Iterator[str]:
    """Group input lines into turns: console commands alone, messages until ``---`` (or a blank line at a
    terminal), the next command, or the end of input. An ending with nothing before it is an empty turn:
    it sends a file attached with ``/attach`` alone (and nothing when none is)."""
    buf: list[str] = []
    for raw in lines:
        line = raw.rstrip("\n")
        ends = line.strip() == "---" or (interactive and not line.strip())
        if line.split(" ", 1)[0] in COMMANDS:
            # A console command ends the message before it (log lines like "/usr/lib/...: warning" don't).
            if buf:
                yield "\n".join(buf)
                buf = []
            yield line
            continue
        if ends:
            yield "\n".join(buf)
            buf = []
            continue
        buf.append(line)
    if buf:
        yield "\n".join(buf)


def write_html(outbox: ConsoleOutbox, path: Path) -> None:
    """The conversation so far as a page approximating Slack's thread pane (``--html``)."""
    path.write_text(html.page(list(outbox.shown)), encoding="utf-8")


def run_console(
    tracebot: Service,
    outbox: ConsoleOutbox,
    *,
    stdin: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    channel: str = "C0CONSOLE",
    user: str = "U0CONSOLE",
) -> int:
    interactive = stdin.isatty()
    session = Session(tracebot, outbox, out, channel=channel, user=user)
    if interactive:
        session.say(
            "tracebot console — what tracebot would post in Slack. /help for commands, /quit to leave."
        )

    def lines() -> Iterator[str]:
        while True:
            if interactive:
                out.write("> ")
                out.flush()
            line = stdin.readline()
            if not line:
                return
            yield line

    for turn in turns(lines(), interactive):
        if turn.split(" ", 1)[0] in COMMANDS:
            if not session.command(turn.strip()):
                break
        elif turn or session.attachments:
            session.message(turn)
    else:
        if session.attachments:  # attached last, with no message after it: the input's end sends it, as text
            session.message("")
    session.settle()
    return 0
