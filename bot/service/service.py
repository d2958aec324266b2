"""What tracebot does with a message, a mention, a shortcut, a /trace command, a button click.

Plain Python over an :class:`~tracebot.service.outbox.Outbox`: the Slack listeners and ``tracebot
console`` call the same methods, so the console shows exactly what Slack would get. Entry points
(``on_*``) return quickly: they dedupe, authorise and plan, then hand slow work to the job pools.

Every message tracebot accepts ends in a posted answer or a posted, explained failure:
- a delivery is claimed and queued together; when it cannot be queued the claim is released (so a
  redelivery gets through) and the channel is told that tracebot is shedding load;
- what answering it needs is written to the store's inbox with the claim and deleted once answered, so
  a process killed with work queued or running leaves it for the next start (:meth:`Service.resume`,
  :mod:`tracebot.service.inbox`);
- answers queue per channel (the job pool's lanes), so a flooded channel waits on its own rate limit
  and nobody else's;
- the store is a record, not a gate (:mod:`tracebot.service.records`): when it fails the answer is
  posted anyway and the failure is logged and shown in the App Home.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from tracebot.config import Config
from tracebot.markup import as_slack_sends, plain_text
from tracebot.matcher.core import language, prose_lines
from tracebot.plugin_api import Caller
from tracebot.render import slack as render
from tracebot.render.messages import msg
from tracebot.render.messages import msg as msg_text  # where ``msg`` names a message
from tracebot.render.slack_home import HOME_BLOCKS, home_view
from tracebot.render.slack_maintainers import AUDIT_ROWS, audit_blocks
from tracebot.result import Diagnosis
from tracebot.secrets import Scrubber
from tracebot.service import posting
from tracebot.service.attachments import FileLimits, about_logs, diagnose_message, located
from tracebot.service.dedupe import RecentKeys, delivery_keys
from tracebot.service.egress import EgressOutbox
from tracebot.service.inbound import (
    Click,
    Inbound,
    SlashCommand,
    inbound_from_record,
    mentions,
)
from tracebot.service.inbox import Inbox, thread_of
from tracebot.service.jobs import JobPool, PoolBusy
from tracebot.service.knowledge import KnowledgeHolder
from tracebot.service.learning import answered_text, maintainer_home, note_unanswered
from tracebot.service.outbox import NotInChannel, Outbox, PostRefused, PostUnconfirmed
from tracebot.service.ratelimit import RateLimiter
from tracebot.service.records import Records
from tracebot.service.redelivery import Redelivery
from tracebot.service.router import Plan, Router
from tracebot.service.runs import TraceRuns
from tracebot.store import ChannelSettings, Store, Work
from tracebot.store.stats import most_helpful

log = logging.getLogger(__name__)


PROGRESS_INTERVAL_S = 1.0  # a running /trace edits its progress message at most this often
SHEDDING_NOTICE_S = 60.0  # at most one "I'm skipping messages here" notice per channel per this
# /trace commands answered again after a restart: pure reads of the paste and the knowledge base. The
# others reach outside tracebot (SLURM, AWS, py-spy pausing a job's processes with ptrace) with the
# rights and the job state of when they were asked: the caller is told, and runs them again if needed.
REPLAYED_COMMANDS = frozenset({"diagnose"})


def _duration(seconds: float) -> str:
    """``seconds`` as a person reads it: under two minutes in seconds (never "0 minutes"), under two hours
    in minutes, else in hours."""
    if seconds < 120:
        return f"{seconds:.0f} seconds"
    return f"{seconds / 60:.0f} minutes" if seconds < 7200 else f"{seconds / 3600:.0f} hours"


def language_of(slack_text: str) -> str:
    """The language a message (or a thread's text) is written in: tracebot's own words to its asker are said in it."""
    return language(prose_lines(plain_text(slack_text, strip_mentions=True)))


@dataclass(frozen=True)
class Accepted:
    """A delivery claimed for this process: its keys, and its inbox row (None: the store could not
    record it, so it is answered but would not survive a restart)."""

    keys: list[str]
    work_id: int | None = None
    again: bool = False  # taken over from a process now gone, which may have posted part of the answer


class Service:
    def __init__(
        self,
        *,
        config: Config,
        store: Store,
        knowledge: KnowledgeHolder,
        outbox: Outbox,
        jobs: JobPool,
        trace_jobs: JobPool | None = None,
        router: Router,
        bot_user_id: str | None = None,
        limiter: RateLimiter | None = None,
        records: Records | None = None,
        clock: Callable[[], float] = time.monotonic,
        durable: bool = True,
    ) -> None:
        """``durable``: accepted work is written to the store's inbox, so a restart answers what a killed
        process left (:meth:`resume`); the console, whose answers go to one terminal, sets it False."""
        self.config = config
        self.store = store
        self.knowledge = knowledge
        # The one door out: everything posted, edited, uploaded or published is scrubbed of secrets.
        self.outbox: EgressOutbox = (
            outbox
            if isinstance(outbox, EgressOutbox)
            else EgressOutbox(outbox, Scrubber.for_process(config.secrets()))
        )
        self.jobs = jobs  # answers to messages, clicks, App Home: quick work
        # /trace runs (py-spy over hundreds of ranks, minutes) get their own pool so they never delay
        # the answer to a pasted error.
        self.trace_jobs = trace_jobs or JobPool(workers=jobs.workers, max_pending=jobs.max_pending)
        self.router = router
        self.bot_user_id = bot_user_id
        self.limits = FileLimits.from_config(config)  # files read from Slack: sizes and time budget
        self.records = records or Records()
        self.inbox = Inbox(store, self.records, durable=durable)
        # Work whose answer and apology Slack would not take stays, and is tried again when Slack is back.
        self.redelivery = Redelivery(
            self.inbox,
            lambda fn, label, lane: self.jobs.submit(fn, label=label, lane=lane),
            give_up_after_s=config.replay_max_age_s,
        )
        if limiter is not None and jobs.pace is None:
            # Answers wait for their channel's slot in the queue, not on a worker.
            jobs.pace = limiter.delay
        self._seen = RecentKeys()  # dedupe that holds when the database does not
        self._clock = clock
        self._shedding_since: dict[str, float] = {}
        self._shedding_lock = threading.Lock()
        # One answer at a time per thread, so "same error again" sees the first answer.
        self._thread_locks = [threading.Lock() for _ in range(64)]
        self.runs = TraceRuns(
            outbox=self.outbox,
            store=store,
            pool=self.trace_jobs,
            router=router,
            caller=self.caller,
            answer_text=self._answer_command,
            progress_interval_s=PROGRESS_INTERVAL_S,
            records=self.records,
            inbox=self.inbox,
            redelivery=self.redelivery,
        )

    def caller(self, user: str | None) -> Caller:
        return Caller(
            slack_user=user,
            cluster_user=self.config.user_map.get(user) if user else None,
            is_admin=bool(user) and user in self.config.admins,
        )

    def settings(self, channel: str) -> ChannelSettings:
        """The channel's settings; the defaults when the store cannot be read."""
        return self.records.attempt(
            "reading channel settings", lambda: self.store.channel_settings(channel), ChannelSettings(channel)
        )

    def threshold(self, channel: str) -> float:
        settings = self.settings(channel)
        return settings.threshold if settings.threshold is not None else self.config.confidence_threshold

    # -- accepting deliveries --------------------------------------------------------------------------
    def accept(self, keys: list[str], kind: str, payload: dict[str, Any]) -> Accepted | None:
        """The first delivery of ``keys``, claimed with the work it needs (the durable inbox); None for a
        delivery seen before. This process remembers the keys too, so a database that is locked,
        read-only or full neither drops the message nor answers it twice."""
        if not self._seen.claim(keys):
            return None
        claimed = self.inbox.claim(keys, kind, payload)
        if claimed is False:  # another process (or a run before a restart) has it
            return None
        return Accepted(keys, None if claimed is True else claimed)

    def release(self, accepted: Accepted) -> None:
        # The store first: a redelivery that slipped in between would otherwise find the store still
        # claimed, keep its own in-process claim, and block every later retry.
        self.records.attempt(
            "releasing a Slack event",
            lambda: self.store.release_event(*accepted.keys, work_id=accepted.work_id),
            None,
        )
        self._seen.release(accepted.keys)

    def enqueue(
        self,
        fn: Callable[[Any], object],
        label: str,
        *,
        channel: str,
        thread: str | None,
        accepted: Accepted,
        lang: str = "en",
    ) -> bool:
        """Queue an answer in ``channel``'s lane; its inbox row goes when it is done (not while Slack cannot
        be reached: :mod:`tracebot.service.redelivery`). When it cannot be queued, the delivery's claim is
        released (a redelivery gets through) and the channel hears that tracebot is shedding load."""
        job = self.redelivery.durable(fn, accepted.work_id, label, channel, again=accepted.again)
        try:
            self.jobs.submit(job, label=label, lane=channel)
            return True
        except PoolBusy as exc:
            log.warning("shedding load: could not queue %s (%s)", label, exc)
            self.release(accepted)
            self._tell_shedding(channel, thread, lang)
            return False

    def _tell_shedding(self, channel: str, thread: str | None, lang: str) -> None:
        """Said in the language of the message skipped (the first one, when several are)."""
        now = self._clock()
        with self._shedding_lock:
            last = self._shedding_since.get(channel)
            if last is not None and now - last < SHEDDING_NOTICE_S:
                return
            self._shedding_since[channel] = now
        text = msg(lang, "shedding")
        try:
            self.jobs.submit(
                lambda job: self.outbox.post(channel, text, [render.section(text)], thread_ts=thread),
                label=f"shedding notice {channel}",
                lane=channel,
                urgent=True,
            )
        except PoolBusy:
            log.warning("a shedding notice for %s is already waiting", channel)

    # -- entry points ----------------------------------------------------------------------------------
    def on_message(self, msg: Inbound) -> bool:
        """A message in a channel tracebot is in. True if it was queued for an answer."""
        if msg.channel_type == "im":
            return self.on_direct(msg, "dm")
        if mentions(msg.text, self.bot_user_id):
            return False  # the app_mention event for the same message answers it
        if not msg.text.strip() and not msg.files:
            return False
        # A channel tracebot does not answer by itself claims nothing: there is no work to record.
        if not self.config.channels.may_auto_reply(msg.channel) or not self.settings(msg.channel).auto_reply:
            return False
        keys = delivery_keys("auto", event_id=msg.event_id, channel=msg.channel, ts=msg.ts)
        accepted = self.accept(keys, "auto", {"msg": asdict(msg)})
        return accepted is not None and self._auto(msg, accepted)

    def on_edit(self, msg: Inbound, edit_ts: str) -> bool:
        """A message its author edited. Not answered before and now carrying an error: answered as a new
        message would be. Answered before: the answer is updated in place when the edit changes it. One
        edit (``edit_ts``) is handled once, however often Slack delivers it. True if work was queued."""
        direct = msg.channel_type == "im" or mentions(msg.text, self.bot_user_id)
        text = plain_text(msg.text, strip_mentions=True)
        words = text.split()
        if (not text and not msg.files) or (direct and words and words[0].lower() in self.router.command_names()):
            return False  # nothing to read, or a command: an edit does not run it again
        if not direct and (
            not self.config.channels.may_auto_reply(msg.channel) or not self.settings(msg.channel).auto_reply
        ):
            return False
        source = "auto" if not direct else "dm" if msg.channel_type == "im" else "mention"
        keys = delivery_keys("edit", event_id=msg.event_id, channel=msg.channel, ts=f"{msg.ts}/{edit_ts}")
        accepted = self.accept(keys, "edit", {"msg": asdict(msg), "source": source})
        return accepted is not None and self._edit(msg, source, accepted)

    def _edit(self, msg: Inbound, source: str, accepted: Accepted) -> bool:
        earlier = self.records.attempt(
            "looking up the answer to an edited message", lambda: self.store.answer_to(msg.channel, msg.ts), None
        )
        if earlier is None or not earlier.reply_ts:
            return self._auto(msg, accepted) if source == "auto" else self._direct(msg, source, accepted)
        reply_ts = earlier.reply_ts
        before = (earlier.confident, earlier.matches[0].entry_id if earlier.matches else None)
        return self.enqueue(
            lambda job: self._update_answer(msg, source, reply_ts, before),
            f"edit {msg.channel}/{msg.ts}",
            channel=msg.channel,
            thread=msg.thread_root,
            accepted=accepted,
        )

    def _update_answer(self, msg: Inbound, source: str, reply_ts: str, before: tuple[bool, str | None]) -> None:
        """The answer to an edited message, in its place (``chat.update``), when the edit changed it: a
        second answer under the first would leave the thread saying two things."""
        msg = located(self.outbox, msg)
        diagnosis = self.diagnose(msg)
        if (bool(diagnosis.confident), diagnosis.matches[0].entry_id if diagnosis.matches else None) == before:
            return
        thread = msg.thread_root
        diag_id = self._record(diagnosis, msg, source=source, thread=thread, reply_ts=reply_ts)
        # Always an answer: one that no longer applies is replaced by one that says nothing known matched.
        rendered = self._rendered(diagnosis, diag_id, always=True)
        try:
            # Slack unreachable (PostUnconfirmed) is not caught: the job is tried again (redelivery)
            self.outbox.update(msg.channel, reply_ts, *posting.fitted(rendered))
        except PostRefused as exc:
            # The old answer cannot be edited (deleted, too old): a stale answer must not stand unremarked,
            # so the new one follows it, saying why; the next edit changes that one.
            log.warning("Slack would not update the answer %s/%s (%s); posting the new one", msg.channel, reply_ts, exc)
            note = msg_text(diagnosis.lang, "answer_changed", reason=render.escape(str(exc)))
            text, blocks = rendered
            ts = posting.post(self.outbox, msg.channel, (f"{note}\n{text}", [render.section(note), *blocks]), thread)
            if diag_id is not None:
                self.records.attempt("recording an answer's ts", lambda: self.store.set_reply_ts(diag_id, ts), None)

    def _auto(self, msg: Inbound, accepted: Accepted) -> bool:
        return self.enqueue(
            lambda job: self._answer_auto(msg),
            f"auto {msg.channel}/{msg.ts}",
            channel=msg.channel,
            thread=msg.thread_root,
            accepted=accepted,
            lang=language_of(msg.text),
        )

    def on_direct(self, msg: Inbound, source: str, keys: list[str] | None = None) -> bool:
        """A mention, a DM or the message shortcut: always answered. ``keys`` name the delivery when it
        is not the message itself (a shortcut can be run on one message many times)."""
        if keys is None:
            keys = delivery_keys("direct", event_id=msg.event_id, channel=msg.channel, ts=msg.ts)
        accepted = self.accept(keys, "direct", {"msg": asdict(msg), "source": source})
        return accepted is not None and self._direct(msg, source, accepted)

    def _direct(self, msg: Inbound, source: str, accepted: Accepted) -> bool:
        text = plain_text(msg.text, strip_mentions=True)
        words = text.split()
        first = words[0].lower() if words else ""
        if (
            source != "shortcut"
            and first in self.router.command_names()
            and (first != "help" or len(words) == 1)
        ):
            # commands get the text as typed, as ``/trace`` gives it them (on_command)
            plan = self.router.plan(text, self.caller(msg.user), msg.channel)
            self.audit(plan, text, msg.user, msg.channel, via="mention")
            return self._command_in_thread(plan, msg, accepted)
        where = {"channel": msg.channel, "thread": msg.thread_root, "accepted": accepted, "lang": language_of(msg.text)}
        if not text and not msg.files:
            return self.enqueue(lambda job: self._hint(msg), "hint", **where)
        return self.enqueue(lambda job: self._answer_asked(msg, source), f"{source} {msg.channel}/{msg.ts}", **where)

    def _hint(self, asked: Inbound) -> None:
        """A mention with nothing in it: how to ask, in the language of the thread it was made in (it has
        no words of its own to tell by)."""
        lang = "en"
        if asked.thread_ts:
            lang = language_of(self.outbox.thread_text(asked.channel, asked.thread_ts))
        hint = msg(lang, "empty_mention")
        self.outbox.post(asked.channel, hint, thread_ts=asked.thread_root)

    def _command_in_thread(self, plan: Plan, msg: Inbound, accepted: Accepted) -> bool:
        """``@tracebot job 123``: the command's answer goes in the mention's thread."""
        where = {"channel": msg.channel, "thread": msg.thread_root, "accepted": accepted}
        if plan.kind == "reply" and plan.result is not None:
            result = plan.result
            if posting.is_private(result) and msg.user:
                user = msg.user
                return self.enqueue(
                    lambda job: posting.tell_caller(self.outbox, msg.channel, user, result, msg.thread_root),
                    plan.label, **where,
                )
            return self.enqueue(
                lambda job: posting.post_result(self.outbox, msg.channel, msg.thread_root, result), plan.label, **where
            )
        reply = self.runs.start(plan, msg.channel, msg.user, thread_ts=msg.thread_root)
        if reply is None:  # queued: the run's own inbox row takes over from the mention's
            self.inbox.done(accepted.work_id)
            return True
        return self.enqueue(
            lambda job: posting.post(self.outbox, msg.channel, reply, msg.thread_root), "busy", **where
        )

    def _answer_auto(self, msg: Inbound) -> None:
        """A paste nobody addressed to tracebot: silent when nothing is confident, but once it is
        answering, a failure is said in the thread rather than swallowed."""
        try:
            self.answer(msg, source="auto", always=False)
        except Exception as exc:
            log.exception("answering a pasted message failed")
            self._say_failed(msg, exc)

    def _answer_asked(self, msg: Inbound, source: str) -> None:
        """Someone asked: even a failure gets an answer (the details go to the log, not the channel)."""
        try:
            self.answer(msg, source=source, always=True)
        except Exception as exc:
            log.exception("answering a %s failed", source)
            self._say_failed(msg, exc)

    def _say_failed(self, asked: Inbound, exc: Exception) -> None:
        """The apology, in the language the asker wrote in (a Japanese thread read it in English)."""
        lang = language_of(asked.text)
        if isinstance(exc, PostRefused):  # the diagnosis worked; Slack would not take the answer
            text = msg(lang, "refused", reason=render.escape(str(exc)))
        elif isinstance(exc, PostUnconfirmed):  # the diagnosis worked; the answer may be posted or not
            text = msg(lang, "unconfirmed", error=render.escape(str(exc)))
        else:
            text = msg(lang, "failed", error=type(exc).__name__)
        self.outbox.post(asked.channel, text, [render.section(text)], thread_ts=asked.thread_root)

    def on_command(self, cmd: SlashCommand) -> render.Rendered | None:
        """``/trace ...`` inside the 3-second ack window. Returns an ephemeral reply, or None when the work
        was queued (its parent message in the channel is the visible answer).

        Slack's markup is undone here, once, for every command (``&amp;``, a link's ``<https://x|x>``, a
        broadcast's ``<!here>``): a command reads what was typed, as the CLI's ``tracebot trace`` gives it."""
        typed = plain_text(cmd.text)
        plan = self.router.plan(typed, self.caller(cmd.user), cmd.channel)
        self.audit(plan, typed, cmd.user, cmd.channel, via="slash")
        if plan.kind == "reply" and plan.result is not None:
            reply: render.Rendered | None = posting.fitted(render.result(plan.result))
        else:
            reply = self.runs.start(plan, cmd.channel, cmd.user, thread_ts=None)
        # The acknowledgement goes to Slack without the outbox: it passes the same door.
        return self.outbox.rendered(reply) if reply is not None else None

    def audit(self, plan: Plan, text: str, user: str | None, channel: str | None, *, via: str) -> None:
        """Write down who asked for which command, where, and what came of it (secrets scrubbed)."""
        words = text.split()
        outcome = "started" if plan.kind == "run" else "answered"
        if plan.result is not None and plan.result.status == "error":
            outcome = str(plan.result.data.get("error", "error")) if isinstance(plan.result.data, dict) else "error"
        command = words[0].lower()[:40] if words else "help"
        args = self.outbox.scrubber.text(" ".join(words[1:]))
        self.records.attempt(
            "recording a command in the audit log",
            lambda: self.store.record_audit(
                user=user, channel=channel, via=via, command=command, args=args, outcome=outcome
            ),
            None,
        )

    def tell_busy(self, click: Click) -> None:
        """A click the job pool had no room for: its clicker is told so, in the answer's language, rather
        than the click vanishing (Slack has its ack and will not send it again)."""
        _, _, lang = click.fields()
        thread = click.thread_ts or click.message_ts
        try:
            self.outbox.ephemeral(click.channel, click.user, msg(lang, "busy_click"), None, thread)
        except Exception:
            log.exception("could not tell %s that their click in %s was dropped (tracebot too busy)", click.user, click.channel)

    def on_click(self, click: Click) -> None:
        diag_id_text, entry_id, lang = click.fields()
        try:
            diag_id = int(diag_id_text)
        except ValueError:
            diag_id = None
        record = (
            None
            if diag_id is None
            else self.records.attempt("reading a diagnosis", lambda: self.store.diagnosis(diag_id), None)
        )
        thread = click.thread_ts or click.message_ts
        if record is None:
            self.outbox.ephemeral(click.channel, click.user, msg(lang, "gone"), None, thread)
            return
        if click.action_id in (render.ACTION_WHY, render.ACTION_OTHER):
            # Only the one who asked wants the rest: the thread keeps the short answer.
            text, blocks = posting.fitted(render.details(record.matches, entry_id, lang))
            self.outbox.ephemeral(click.channel, click.user, text, blocks, thread)
            return
        helpful = click.action_id == render.ACTION_HELPFUL
        recorded = self.records.attempt(
            "recording feedback",
            lambda: self.store.record_feedback(
                diagnosis_id=record.id, entry_id=entry_id, user=click.user, helpful=helpful
            ) is not None,
            False,
        )
        thanks = msg(lang, "feedback_not_recorded" if not recorded else "thanks_helpful" if helpful else "thanks_not_this")
        self.outbox.ephemeral(click.channel, click.user, thanks, None, thread)

    def visible_to(self, user: str, records: list[Any], limit: int = 10) -> list[Any]:
        """The diagnoses ``user`` may see: their own, and those from conversations they are a member of.
        A conversation whose members cannot be read shows them only their own."""
        members: dict[str, set[str] | None] = {}
        shown = []
        for record in records:
            if record.user != user:
                if record.channel not in members:
                    members[record.channel] = self.outbox.members(record.channel)
                if user not in (members[record.channel] or set()):
                    continue
            shown.append(record)
            if len(shown) == limit:
                break
        return shown

    def on_home_opened(self, user: str) -> None:
        recent = self.records.attempt("reading recent diagnoses", lambda: self.store.recent_diagnoses(limit=100), [])
        admin = self.caller(user).is_admin
        view = home_view(
            kb=self.knowledge.kb,
            recent=self.visible_to(user, recent),
            helpful=self.records.attempt("reading feedback", lambda: most_helpful(self.store), []),
            kb_errors=self.knowledge.errors,
            plugin_errors=self.router.host.load_errors(),
            storage_errors=[str(f) for f in self.records.faults],
            undelivered=[str(g) for g in self.redelivery.gave_up],
            admin=admin,
        )
        if admin:
            audit = self.records.attempt("reading the audit log", lambda: self.store.audit(limit=AUDIT_ROWS), [])
            extra = [*maintainer_home(self.store, self.records), *audit_blocks(audit)]
            view["blocks"] = [*view["blocks"], *extra][:HOME_BLOCKS]
        self.outbox.publish_home(user, view)

    # -- diagnosing ------------------------------------------------------------------------------------
    def diagnose(self, msg: Inbound) -> Diagnosis:
        """The message's text and attachments against the knowledge base, judged by its channel's threshold."""
        return diagnose_message(
            self.knowledge.matcher,
            self.outbox,
            msg,
            threshold=self.threshold(msg.channel),
            limits=self.limits,
        )

    def answer(self, msg: Inbound, *, source: str, always: bool, thread_ts: str | None = None) -> str | None:
        """Diagnose ``msg`` and reply in its thread. Returns the reply's ts, or None when silent."""
        msg = located(self.outbox, msg)
        diagnosis = self.diagnose(msg)
        if not always:  # unprompted: what a reader of the thread needs, not why an image was passed over
            diagnosis.notes = about_logs(msg, diagnosis.notes)
        return self._post_answer(diagnosis, msg, source=source, always=always, thread=thread_ts or msg.thread_root)

    def _answer_command(self, text: str, channel: str, user: str | None, thread: str) -> None:
        """``/trace diagnose <text>``: answered like a mention, in the run's thread."""
        # ``text`` is as typed; a message's text is as Slack sends it, undone once when it is diagnosed
        msg = Inbound(channel=channel, user=user, ts=thread, text=as_slack_sends(text), thread_ts=thread)
        self.answer(msg, source="command", always=True, thread_ts=thread)

    def _post_answer(self, diagnosis: Diagnosis, msg: Inbound, *, source: str, always: bool, thread: str) -> str | None:
        confident = diagnosis.confident
        kept = answered_text(msg, diagnosis, self.outbox.scrubber)
        note_unanswered(self.store, self.records, msg, diagnosis, kept)
        if not diagnosis.worth_posting and not always:
            if diagnosis.notes:
                # A log shared where tracebot reads logs, not read (whole): silence would say "nothing
                # known in it". One short note in the thread says why instead.
                return posting.post(self.outbox, msg.channel, render.logs_unread(diagnosis.notes, diagnosis.lang), thread)
            return None
        lock = self._thread_locks[zlib.crc32(f"{msg.channel}/{thread}".encode()) % len(self._thread_locks)]
        with lock:
            if confident and source == "auto":
                earlier = self.records.attempt(
                    "looking up an earlier answer",
                    lambda: self.store.earlier_answer(
                        msg.channel, thread, confident[0].entry_id, self.config.repeat_window_s
                    ),
                    None,
                )
                if earlier is not None and earlier.reply_ts:
                    link = self.outbox.permalink(msg.channel, earlier.reply_ts)
                    return posting.post(
                        self.outbox, msg.channel, render.pointer(link, confident[0].title, diagnosis.lang), thread
                    )
            diag_id = self._record(diagnosis, msg, source=source, thread=thread, kept=kept)
            rendered = self._rendered(diagnosis, diag_id, always=always)
            try:
                ts = posting.post(self.outbox, msg.channel, rendered, thread, filename="tracebot-diagnosis.txt")
            except NotInChannel:
                if not msg.response_url:
                    raise
                # The shortcut run in a channel tracebot is not in: the clicker still gets the answer.
                self.outbox.respond(msg.response_url, *posting.fitted(rendered))
                return None
            if diag_id is not None:
                self.records.attempt("recording an answer's ts", lambda: self.store.set_reply_ts(diag_id, ts), None)
            return ts

    def _record(
        self,
        diagnosis: Diagnosis,
        msg: Inbound,
        *,
        source: str,
        thread: str,
        reply_ts: str | None = None,
        kept: str | None = None,
    ) -> int | None:
        if kept is None:
            kept = answered_text(msg, diagnosis, self.outbox.scrubber)
        return self.records.attempt(
            "recording a diagnosis",
            lambda: self.store.record_diagnosis(
                channel=msg.channel,
                thread_ts=thread,
                message_ts=msg.ts,
                user=msg.user,
                source=source,
                matches=diagnosis.matches,
                confident=bool(diagnosis.confident),
                text=kept,
                scrub=self.outbox.scrubber.text,
                reply_ts=reply_ts,
            ),
            None,
        )

    @staticmethod
    def _rendered(diagnosis: Diagnosis, diag_id: int | None, *, always: bool) -> render.Rendered:
        rendered = render.answer(diagnosis, diagnosis_id=diag_id, always_answer=always)
        assert rendered is not None  # always, or something confident
        if diagnosis.notes:
            rendered[1].append(render.notes_block(diagnosis.notes, diagnosis.lang))
        return rendered

    def submit(self, fn: object, label: str, lane: str | None = None) -> None:
        """Queue quick work (a click, the App Home) on the job pool."""
        try:
            self.jobs.submit(fn, label=label, lane=lane)  # type: ignore[arg-type]
        except PoolBusy:
            log.error("job pool full; dropped %s", label)
            raise

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once nothing is queued, running or waiting to be tried again (the console and tests wait
        for this)."""
        end = time.monotonic() + timeout
        while True:
            scheduled, waiting = self.redelivery.scheduled, self.redelivery.waiting
            for _ in range(2):  # a trace run may queue an answer, and an answer never queues a trace run
                for pool in (self.trace_jobs, self.jobs):
                    if not pool.wait_idle(max(0.0, end - time.monotonic())):
                        return False
            if not waiting and self.redelivery.scheduled == scheduled:
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)  # a retry's timer fires into the pool

    def shutdown(self, wait: bool = True) -> None:
        self.redelivery.stop()
        self.trace_jobs.shutdown(wait=wait)
        self.jobs.shutdown(wait=wait)

    def drain(self, timeout: float) -> bool:
        """Stopping: post what was already accepted (Slack has its ack and will not send it again), for at
        most ``timeout`` seconds, then stop. What is left stays in the inbox for the next start
        (:meth:`resume`). True when nothing was left."""
        done = self.wait_idle(timeout)
        if not done:
            log.error(
                "stopping with %d answers and %d /trace runs unfinished after %gs; the next start answers them",
                self.jobs.pending, self.trace_jobs.pending, timeout,
            )
        self.shutdown(wait=False)
        return done

    # -- after a restart -------------------------------------------------------------------------------
    def resume(self) -> int:
        """Answer the work that processes now gone had accepted (``kill -9``, OOM, crash, reboot, a drain
        cut short): each row is taken by one process (:meth:`Inbox.adopt`) and answered once. Work older
        than ``replay_max_age_s`` is not answered any more: whoever asked is told it was dropped; a paste
        nobody addressed to tracebot is only logged. Returns how many rows were taken."""
        taken = self.inbox.adopt(self.config.replay_max_age_s)
        for work in taken:
            try:
                self._resume(work)
            except Exception:  # one bad row must not stop the others
                log.exception("could not answer again %s work %s left by a stopped process", work.kind, work.id)
                self.inbox.done(work.id)
        if taken:
            log.info("answering again %d messages and /trace runs a stopped tracebot had accepted", len(taken))
        return len(taken)

    def _resume(self, work: Work) -> None:
        p = work.payload
        old = time.time() - work.created_at > self.config.replay_max_age_s
        if work.kind == "trace":
            self._resume_trace(work, old)
            return
        if work.kind not in ("auto", "direct", "edit"):  # written by another version: not guessed at
            log.warning("dropped work %s of a kind this version does not answer (%.40r)", work.id, work.kind)
            self.inbox.done(work.id)
            return
        msg = inbound_from_record(p["msg"])
        accepted = Accepted([], work.id, again=True)
        if work.kind == "auto" and old:
            log.warning("dropped an unanswered paste in %s from %s ago (tracebot was stopped)",
                        msg.channel, _duration(time.time() - work.created_at))
            self.inbox.done(work.id)
        elif work.kind == "edit":
            self._edit(msg, p["source"], accepted)
        elif work.kind == "auto":
            self._auto(msg, accepted)
        elif old:
            self._tell_dropped(work, msg.channel, msg.thread_root, msg.user, "your message")
        else:
            self._direct(msg, p["source"], accepted)

    def _resume_trace(self, work: Work, old: bool) -> None:
        p = work.payload
        label, user = render.escape(p["label"]), p.get("user")
        where = thread_of(work)
        channel, thread = where if where else (p["channel"], p.get("thread_ts"))
        if old:
            self._tell_dropped(work, channel, thread, user, f"`/trace {label}`")
            return
        why = (
            f":warning: tracebot restarted while `/trace {label}` was running, and did not run it again by itself: "
            "it reaches outside tracebot (SLURM, AWS or a job's processes) with what was true when you asked. "
            "Run it again if you still need it."
        )
        if p["command"] in REPLAYED_COMMANDS:
            # the caller's rights as they are now; and the command the text plans, not the row's word for it
            plan = self.router.plan(p["text"], self.caller(user), p["channel"])
            if plan.kind == "run" and plan.command in REPLAYED_COMMANDS:
                busy = self.runs.start(plan, channel, user, thread_ts=thread)
                if busy is None:
                    self._mark_parent(work, channel, p["label"], user, ":arrows_counterclockwise: tracebot restarted; answered again below")
                    self.inbox.done(work.id)
                    return
                why = f"{busy[0]} (tracebot restarted while `/trace {label}` was running.) Run it again if you still need it."
        self._mark_parent(work, channel, p["label"], user, ":warning: interrupted: tracebot restarted")
        self._tell(work, channel, thread, user, why)

    def _tell_dropped(self, work: Work, channel: str, thread: str | None, user: str | None, what: str) -> None:
        text = (
            f":warning: tracebot restarted and dropped {what} (it waited longer than "
            f"{_duration(self.config.replay_max_age_s)}). Post it again if you still need an answer."
        )
        if work.kind == "trace":
            self._mark_parent(work, channel, work.payload["label"], user, ":warning: dropped: tracebot restarted")
        self._tell(work, channel, thread, user, text)

    def _tell(self, work: Work, channel: str, thread: str | None, user: str | None, text: str) -> None:
        """``text`` in the work's thread (or, with no thread, to the one who asked), then the work is done.
        When even that cannot be posted, it is logged."""
        def say(job: object) -> None:
            try:
                if thread is not None or not user:
                    self.outbox.post(channel, text, [render.section(text)], thread_ts=thread)
                else:
                    self.outbox.ephemeral(channel, user, text, [render.section(text)])
            except PostUnconfirmed:
                raise  # Slack is down: the note is tried again (redelivery), as an answer is
            except Exception:
                log.exception("could not tell %s in %s that tracebot dropped its work", user, channel)
        label = f"restart note {channel}"
        try:
            self.jobs.submit(self.redelivery.durable(say, work.id, label, channel, again=True), label=label, lane=channel)
        except PoolBusy:
            log.error("could not queue the restart note for %s in %s", user, channel)

    def _mark_parent(self, work: Work, channel: str, label: str, user: str | None, state: str) -> None:
        """A ``/trace`` run's own parent message says "running…" no more (``label`` as typed: the parent
        escapes it)."""
        where = thread_of(work)
        if where is None or work.payload.get("thread_ts") is not None:
            return  # no parent posted, or the thread was the caller's (a mention's), not the run's
        try:
            self.outbox.update(where[0], where[1], *render.parent(label, user, state))
        except Exception:
            log.exception("could not update the parent message of an interrupted /trace %s", label)
