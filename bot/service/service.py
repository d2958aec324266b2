"""What tracebot does with a message, a mention, a shortcut, a /trace command, a button click.

Plain Python over an :class:`~tracebot.slack.outbox.Outbox`: the Slack listeners and ``tracebot console``
call the same methods, so the console shows exactly what Slack would get. Entry points (``on_*``)
return quickly: they dedupe, authorize and plan, then hand slow work to the job pool.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracebot.matcher.suggest import placeholders
from tracebot.plugin_api import Caller
from tracebot.render import slack as render
from tracebot.render.slack_home import home_view
from tracebot.result import Match
from tracebot.service import posting
from tracebot.service.dedupe import delivery_keys
from tracebot.service.inbound import Click, FileRef, Inbound, SlashCommand, mentions, plain_text
from tracebot.service.jobs import JobPool, PoolBusy
from tracebot.service.outbox import Outbox
from tracebot.service.router import TraceRouter
from tracebot.service.runs import TraceRuns
from tracebot.store import Store
from tracebot.store.stats import most_helpful

log = logging.getLogger(__name__)

_TEXT_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".json", ".yaml", ".yml", ".py", ".trace")
_TEXT_FILETYPES = {"text", "log", "plain", "python", "shell", "json", "yaml", "gzip", "csv", "markdown"}


@dataclass
class Tunables:
    repeat_window_s: float = 600.0  # the same error again in a thread within this gets a pointer
    max_file_bytes: int = 50 * 1024 * 1024
    progress_interval_s: float = 1.0


def is_text_file(f: FileRef) -> bool:
    if f.mimetype.startswith(("image/", "video/", "audio/")):
        return False
    return (
        f.mimetype.startswith("text/")
        or f.mimetype in ("application/gzip", "application/x-gzip", "application/json")
        or f.filetype in _TEXT_FILETYPES
        or f.name.lower().endswith(_TEXT_SUFFIXES)
    )


def merge_matches(diagnoses: list[Any]) -> list[Match]:
    """One list from several diagnoses (text + files): an entry found twice keeps its best score."""
    best: dict[str, Match] = {}
    for diag in diagnoses:
        for m in diag.matches:
            if m.entry_id not in best or m.score > best[m.entry_id].score:
                best[m.entry_id] = m
    return sorted(best.values(), key=lambda m: -m.score)


class Tracebot:
    def __init__(
        self,
        *,
        config: Any,
        store: Store,
        knowledge: Any,
        outbox: Outbox,
        jobs: JobPool,
        trace_jobs: JobPool | None = None,
        router: TraceRouter,
        bot_user_id: str | None = None,
        tunables: Tunables | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.knowledge = knowledge
        self.outbox = outbox
        self.jobs = jobs  # answers to messages, clicks, App Home: quick work
        # /trace runs (py-spy over hundreds of ranks, minutes) get their own pool so they never delay
        # the answer to a pasted error.
        self.trace_jobs = trace_jobs or JobPool(workers=jobs.workers, max_pending=jobs.max_pending)
        self.router = router
        self.bot_user_id = bot_user_id
        self.tunables = tunables or Tunables()
        # One answer at a time per thread, so "same error again" sees the first answer.
        self._thread_locks = [threading.Lock() for _ in range(64)]
        self.runs = TraceRuns(self)

    def caller(self, user: str | None) -> Caller:
        return Caller(
            slack_user=user,
            cluster_user=self.config.user_map.get(user) if user else None,
            is_admin=bool(user) and user in self.config.admins,
        )

    def threshold(self, channel: str) -> float:
        settings = self.store.channel_settings(channel)
        return settings.threshold if settings.threshold is not None else self.config.confidence_threshold

    # -- entry points ----------------------------------------------------------------------------------
    def on_message(self, msg: Inbound) -> bool:
        """A message in a channel tracebot is in. True if it was queued for an answer."""
        if msg.channel_type == "im":
            return self.on_direct(msg, "dm")
        if mentions(msg.text, self.bot_user_id):
            return False  # the app_mention event for the same message answers it
        if not msg.text.strip() and not msg.files:
            return False
        if not self.store.claim_event(
            *delivery_keys("auto", event_id=msg.event_id, channel=msg.channel, ts=msg.ts)
        ):
            return False
        if not self.store.channel_settings(msg.channel).auto_reply:
            return False
        self.submit(lambda job: self.answer(msg, source="auto", always=False), f"auto {msg.channel}/{msg.ts}")
        return True

    def on_direct(self, msg: Inbound, source: str, keys: list[str] | None = None) -> bool:
        """A mention, a DM or the message shortcut: always answered. ``keys`` name the delivery when it
        is not the message itself (a shortcut can be run on one message many times)."""
        if keys is None:
            keys = delivery_keys("direct", event_id=msg.event_id, channel=msg.channel, ts=msg.ts)
        if not self.store.claim_event(*keys):
            return False
        text = plain_text(msg.text, strip_mentions=True)
        words = text.split()
        first = words[0].lower() if words else ""
        if (
            source != "shortcut"
            and first in self.router.command_names()
            and (first != "help" or len(words) == 1)
        ):
            plan = self.router.plan(text, self.caller(msg.user), msg.channel)
            if plan.kind == "reply" and plan.result is not None:
                self.submit(
                    lambda job: posting.post_result(
                        self.outbox, msg.channel, msg.thread_root, plan.result, self.knowledge.kb
                    ),
                    plan.label,
                )
            else:
                reply = self.runs.start(plan, msg.channel, msg.user, thread_ts=msg.thread_root)
                if reply is not None:
                    self.submit(
                        lambda job: posting.post(self.outbox, msg.channel, reply, msg.thread_root), "busy"
                    )
            return True
        if not text and not msg.files:
            hint = "Paste an error after mentioning me (or attach a log), or try `/trace help`."
            self.submit(lambda job: self.outbox.post(msg.channel, hint, thread_ts=msg.thread_root), "hint")
            return True
        self.submit(lambda job: self._answer_asked(msg, source), f"{source} {msg.channel}/{msg.ts}")
        return True

    def _answer_asked(self, msg: Inbound, source: str) -> None:
        """Someone asked: even a failure gets an answer (the details go to the log, not the channel)."""
        try:
            self.answer(msg, source=source, always=True)
        except Exception as exc:
            log.exception("answering a %s failed", source)
            text = f":x: Sorry, I could not diagnose that ({type(exc).__name__}); the error is in my log."
            self.outbox.post(msg.channel, text, [render.section(text)], thread_ts=msg.thread_root)

    def on_command(self, cmd: SlashCommand) -> render.Rendered | None:
        """``/trace ...`` inside the 3-second ack window. Returns an ephemeral reply, or None when the work
        was queued (its parent message in the channel is the visible answer)."""
        plan = self.router.plan(cmd.text, self.caller(cmd.user), cmd.channel)
        if plan.kind == "reply" and plan.result is not None:
            return posting.fitted(render.result(plan.result, self.knowledge.kb))
        return self.runs.start(plan, cmd.channel, cmd.user, thread_ts=None)

    def on_click(self, click: Click) -> None:
        diag_id_text, _, entry_id = click.value.partition(":")
        try:
            record = self.store.diagnosis(int(diag_id_text))
        except ValueError:
            record = None
        thread = click.thread_ts or click.message_ts
        if record is None:
            self.outbox.ephemeral(
                click.channel, click.user, "That answer is no longer in my records.", None, thread
            )
            return
        if click.action_id == render.ACTION_OTHER:
            rendered = render.other_matches(record.matches, entry_id, self.knowledge.kb)
            posting.post(self.outbox, click.channel, rendered, thread)
            return
        helpful = click.action_id == render.ACTION_HELPFUL
        self.store.record_feedback(
            diagnosis_id=record.id, entry_id=entry_id, user=click.user, helpful=helpful
        )
        thanks = (
            "Thanks, noted as helpful."
            if helpful
            else "Thanks. Noted as not this one: knowledge-base maintainers see it in `tracebot stats`."
        )
        self.outbox.ephemeral(click.channel, click.user, thanks, None, thread)

    def on_home_opened(self, user: str) -> None:
        view = home_view(
            kb=self.knowledge.kb,
            recent=self.store.recent_diagnoses(limit=10),
            helpful=most_helpful(self.store),
            kb_errors=self.knowledge.errors,
            plugin_errors=self.router.host.load_errors(),
        )
        self.outbox.publish_home(user, view)

    # -- diagnosing ------------------------------------------------------------------------------------
    def answer(self, msg: Inbound, *, source: str, always: bool, thread_ts: str | None = None) -> str | None:
        """Diagnose ``msg`` and reply in its thread. Returns the reply's ts, or None when silent."""
        matches, notes = self.diagnose(msg, report=always)
        thread = thread_ts or msg.thread_root
        threshold = self.threshold(msg.channel)
        confident = [m for m in matches if m.score >= threshold]
        if not confident and not always:
            return None
        lock = self._thread_locks[zlib.crc32(f"{msg.channel}/{thread}".encode()) % len(self._thread_locks)]
        with lock:
            if confident and source == "auto":
                earlier = self.store.earlier_answer(
                    msg.channel, thread, confident[0].entry_id, self.tunables.repeat_window_s
                )
                if earlier is not None and earlier.reply_ts:
                    link = self.outbox.permalink(msg.channel, earlier.reply_ts)
                    return posting.post(
                        self.outbox, msg.channel, render.pointer(link, confident[0].title), thread
                    )
            diag_id = self.store.record_diagnosis(
                channel=msg.channel,
                thread_ts=thread,
                message_ts=msg.ts,
                user=msg.user,
                source=source,
                matches=matches[:10],
                confident=bool(confident),
            )
            rendered = render.diagnosis(
                matches,
                self.knowledge.kb,
                diagnosis_id=diag_id,
                threshold=threshold,
                always_answer=always,
                filled=placeholders(plain_text(msg.text)),
            )
            assert rendered is not None  # always, or something confident
            if notes:
                rendered[1].append(render.context(*(render.escape(n) for n in notes[:5])))
            ts = posting.post(self.outbox, msg.channel, rendered, thread, filename="tracebot-diagnosis.txt")
            self.store.set_reply_ts(diag_id, ts)
            return ts

    def diagnose(self, msg: Inbound, report: bool = True) -> tuple[list[Match], list[str]]:
        """Match the message text and its text/log attachments. ``notes`` say what was skipped and why."""
        matcher = self.knowledge.matcher
        diagnoses, notes = [], []
        text = plain_text(msg.text, strip_mentions=True)
        if text:
            diagnoses.append(matcher.diagnose(text))
        for f in msg.files:
            if not is_text_file(f) or not f.url:
                notes.append(f"{f.name}: skipped, not a text or log file")
                continue
            if f.size is not None and f.size > self.tunables.max_file_bytes:
                notes.append(f"{f.name}: skipped, larger than {self.tunables.max_file_bytes >> 20} MB")
                continue
            with tempfile.TemporaryDirectory(prefix="tracebot-") as tmp:
                path = Path(tmp) / ("upload.gz" if f.name.lower().endswith(".gz") else "upload.log")
                try:
                    self.outbox.download(f.url, path, self.tunables.max_file_bytes)
                    diagnoses.append(matcher.diagnose_file(path))
                except Exception as exc:  # one unreadable file must not lose the rest of the answer
                    log.warning("could not read %s: %s", f.name, exc)
                    notes.append(f"{f.name}: could not be read ({type(exc).__name__}: {str(exc)[:120]})")
        for diag in diagnoses:
            notes.extend(diag.notes or [])
        return merge_matches(diagnoses), notes if report else []

    def submit(self, fn: Any, label: str) -> None:
        """Queue quick work (an answer, a click, the App Home) on the job pool."""
        try:
            self.jobs.submit(fn, label=label)
        except PoolBusy:
            log.error("job pool full; dropped %s", label)
            raise

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once nothing is queued or running (the console and tests wait for this)."""
        end = time.monotonic() + timeout
        for _ in range(2):  # a trace run may queue an answer, and an answer never queues a trace run
            for pool in (self.trace_jobs, self.jobs):
                if not pool.wait_idle(max(0.0, end - time.monotonic())):
                    return False
        return True

    def shutdown(self, wait: bool = True) -> None:
        self.trace_jobs.shutdown(wait=wait)
        self.jobs.shutdown(wait=wait)
