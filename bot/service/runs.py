"""A ``/trace`` run on the job pool: parent message, progress line in its thread, result, trace_runs row.

Started from the 3-second ack window (:meth:`TraceRuns.start` only queues); the same work already
running (same dedupe key) is pointed at instead of started again, but only within one channel: the
thread may be in a channel the second person cannot open, so someone asking from elsewhere gets the
result posted where they asked. Built from the objects it uses, so it can be read (and tested) without
the rest of the service.

Every run ends visibly: whatever fails (the plugin, Slack, the store), the parent message and the
progress line are finalised; the store only records the run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from tracebot.plugin_api import Caller
from tracebot.render import slack as render
from tracebot.result import Result
from tracebot.service import posting
from tracebot.service.egress import EgressOutbox
from tracebot.service.inbox import Inbox
from tracebot.service.jobs import Job, JobPool, PoolBusy
from tracebot.service.outbox import DELIVERY, NotInChannel
from tracebot.service.plugin_host import BUILTIN_COMMANDS
from tracebot.service.progress import ProgressLine
from tracebot.service.records import Records
from tracebot.service.redelivery import LATER, Redelivery
from tracebot.service.router import Plan, Router
from tracebot.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Follower:
    """Someone who asked, from another channel, for work already running: they get the result too."""

    channel: str
    user: str | None
    thread_ts: str | None
    work_id: int | None = None  # their own inbox row: a restart before the result tells them it was cut short


class TraceRuns:
    def __init__(
        self,
        *,
        outbox: EgressOutbox,
        store: Store,
        pool: JobPool,
        router: Router,
        caller: Callable[[str | None], Caller],
        answer_text: Callable[[str, str, str | None, str], None],
        progress_interval_s: float = 1.0,
        records: Records | None = None,
        inbox: Inbox | None = None,
        redelivery: Redelivery | None = None,
    ) -> None:
        """``redelivery``: where a result Slack could not take waits to be posted again (None: not kept)."""
        self.outbox = outbox
        self.store = store
        self.pool = pool
        self.router = router
        self.caller = caller
        self.answer_text = answer_text  # posts the answer to ``/trace diagnose <text>`` in a thread
        self.progress_interval_s = progress_interval_s
        self.records = records or Records()
        self.inbox = inbox or Inbox(store, self.records, durable=False)
        self.redelivery = redelivery
        self._lock = threading.Lock()  # a job's "channel", "followers" and "finished" in its meta

    def start(
        self, plan: Plan, channel: str, user: str | None, thread_ts: str | None
    ) -> render.Rendered | None:
        """Queue ``plan``; return a reply for the user now (busy, already running) or None."""
        running = self.pool.running(plan.key) if plan.key is not None else None
        if running is not None:
            with self._lock:
                here = running.meta.get("channel") == channel and not running.meta.get("finished", False)
                link = running.meta.get("permalink")
            if here:
                # Pointed at the run, answered now: nothing for a restart to owe, so no inbox row is written
                # (it was written and deleted at once). Should the run end in between, the link still leads
                # to its answer.
                return _already_running_here(plan, link)
        try:
            job, created, work_id = self._submit(
                plan, channel, user, thread_ts, key=plan.key, meta={"rights": self._rights(user)})
        except PoolBusy as exc:
            return _busy(exc)
        if created:
            return None
        with self._lock:
            finished = job.meta.get("finished", False)
            same_channel = job.meta["channel"] == channel
            # A result computed with someone else's rights is only handed to a caller with the same rights
            # (it may show a job, log or process they may not see); others get their own run.
            same_rights = job.meta.get("rights") == self._rights(user)
            following = not finished and not same_channel and same_rights
            if following:
                # Their row stays until the result is posted to them: a restart before then finds it and
                # tells them, where deleting it here left them waiting for a result that never came.
                job.meta.setdefault("followers", []).append(Follower(channel, user, thread_ts, work_id))
            link = job.meta.get("permalink")
        if not following:  # answered now (pointed at the run), or by a run of its own with its own row
            self.inbox.done(work_id)
        if finished or (not same_channel and not same_rights):  # runs on its own
            return self._start_unshared(plan, channel, user, thread_ts)
        if same_channel:
            return _already_running_here(plan, link)
        label = _typed(plan)
        text = f"{label} is already running for someone else; I'll post its result here too when it is done."
        return text, [render.section(text)]

    def _rights(self, user: str | None) -> tuple[str | None, bool]:
        caller = self.caller(user)
        return caller.cluster_user, caller.is_admin

    def _start_unshared(
        self, plan: Plan, channel: str, user: str | None, thread_ts: str | None
    ) -> render.Rendered | None:
        try:
            self._submit(plan, channel, user, thread_ts)
        except PoolBusy as exc:
            return _busy(exc)
        return None

    def _submit(
        self,
        plan: Plan,
        channel: str,
        user: str | None,
        thread_ts: str | None,
        *,
        key: str | None = None,
        meta: dict[str, object] | None = None,
    ) -> tuple[Job, bool, int | None]:
        """Queue the run, recorded in the inbox first (a restart finds it there): the job, whether it is
        new, and the inbox row (the caller's to finish when the run is not new). PoolBusy when the pool is
        full (its inbox row is gone again)."""
        work_id = self.inbox.add("trace", {
            "text": plan.text, "label": plan.label, "command": plan.command,
            "channel": channel, "user": user, "thread_ts": thread_ts,
        })
        try:
            job, created = self.pool.submit(
                lambda job: self._run(job, plan, channel, user, thread_ts, work_id),
                label=plan.label,
                key=key,
                meta={"channel": channel, **(meta or {})},
            )
        except PoolBusy:
            self.inbox.done(work_id)
            raise
        return job, created, work_id

    def _open_thread(self, plan: Plan, channel: str, user: str | None) -> tuple[str, str]:
        """Post the parent message; where tracebot is not a member, in the user's DM with it instead."""
        parent = render.parent(plan.label, user, "running…")
        try:
            return channel, self.outbox.post(channel, *parent)
        except NotInChannel:
            if not user:
                raise
            note = (
                f"I'm not in <#{channel}>, so here is your {_typed(plan)}. "
                "Invite me there with `/invite @tracebot`."
            )
            dm = self.outbox.open_dm(user)
            self.outbox.post(dm, note, [render.section(note)])
            return dm, self.outbox.post(dm, *parent)

    def _run(
        self, job: Job, plan: Plan, channel: str, user: str | None, thread_ts: str | None, work_id: int | None = None
    ) -> None:
        assert plan.step is not None
        status, summary = "error", "failed; see the log"
        parent_ts: str | None = None
        line: ProgressLine | None = None
        run_id: int | None = None
        result: Result | None = None
        finished = later = False
        try:
            if thread_ts is None:
                channel, parent_ts = self._open_thread(plan, channel, user)
                with self._lock:
                    job.meta["channel"] = channel  # the thread's channel: a pointer must lead there
            thread = thread_ts or parent_ts
            assert thread is not None
            self.inbox.where(work_id, channel, thread)
            job.meta["permalink"] = self.outbox.permalink(channel, thread)
            line = ProgressLine(self.outbox, channel, thread, self.progress_interval_s)
            job.on_progress(line.update)
            # The record is kept for good, so it is scrubbed as everything that leaves is: a plugin's words and
            # dedupe key may hold a pasted text (a takes_text command's whole paste), its summary a log line.
            kept = self.outbox.scrubber.text
            run_id = self.records.attempt(
                f"recording /trace {plan.label}",
                lambda: self.store.start_trace_run(
                    command=plan.command, args=[kept(w) for w in plan.words],
                    dedupe_key=kept(plan.key) if plan.key is not None else None, user=user, channel=channel
                ),
                None,
            )
            if plan.step.command.plugin == BUILTIN_COMMANDS and plan.command == "diagnose":
                text = plan.step.kwargs["text"]
                later = self._deliver(lambda: self.answer_text(text, channel, user, thread), plan, channel, work_id)
                status, summary = "ok", "diagnosed"
            else:
                ctx = self.router.context(plan.step, self.caller(user), channel, progress=job.progress)
                result = self.router.run(plan, ctx)
                if posting.is_private(result) and user:
                    # "not yours", "not mapped", a bad argument: for the caller's eyes only
                    posting.tell_caller(self.outbox, channel, user, result, thread)
                    refused = str(result.data.get("error"))
                    self.records.attempt(
                        "recording a refusal in the audit log",
                        lambda: self.store.record_audit(user=user, channel=channel, via="run", command=plan.command,
                                                        args=self.outbox.scrubber.text(" ".join(plan.words)), outcome=refused),
                        None,
                    )
                    result, status, summary = None, "error", "not run; only the person who asked sees why"
                else:
                    posted = result
                    later = self._deliver(lambda: posting.post_result(self.outbox, channel, thread, posted), plan, channel, work_id)
                    status, summary = result.status, result.summary
            finished = True
        except Exception as exc:
            log.exception("/trace %s failed", plan.label)
            summary = f"failed ({type(exc).__name__}); the error is in my log"
        finally:
            self._finalise(job, plan, channel, user, parent_ts, thread_ts, line, finished, status, summary)
            if run_id is not None:
                self.records.attempt(
                    f"recording the end of /trace {plan.label}",
                    lambda: self.store.update_trace_run(run_id, status=status,
                                                        summary=self.outbox.scrubber.text(summary)[:500]),
                    None,
                )
            self._tell_followers(job, plan, result, status, summary)
            if not later:  # else its row stays until the result is posted (or given up on)
                self.inbox.done(work_id)

    def _deliver(self, post: Callable[[], object], plan: Plan, channel: str, work_id: int | None) -> bool:
        """Post the run's answer now; when Slack cannot be reached, it is posted again later as an answer to
        a message is (:mod:`tracebot.service.redelivery`: retries, no double post, given up visibly). True
        when it waits for that."""
        if self.redelivery is None:
            post()
            return False
        job = self.redelivery.durable(lambda _job: post(), work_id, f"/trace {plan.label} result", channel)
        return job(None) is LATER

    def _finalise(
        self,
        job: Job,
        plan: Plan,
        channel: str,
        user: str | None,
        parent_ts: str | None,
        thread_ts: str | None,
        line: ProgressLine | None,
        finished: bool,
        status: str,
        summary: str,
    ) -> None:
        """Close the progress line and the parent message, each on its own: one failing to update must
        not leave the other saying "running…"."""
        steps: list[tuple[str, Callable[[], object]]] = []
        if line is not None:
            steps.append(("progress line", lambda: line.close(finished)))
        if parent_ts is not None:
            emoji = render.STATUS_EMOJI.get(status, "")
            done = render.parent(plan.label, user, f"{emoji} {summary[:300]}")
            steps.append(("parent message", lambda: self.outbox.update(channel, parent_ts, *done)))
        elif line is None and thread_ts is not None:  # failed before anything was posted in the thread
            text = f":x: {_typed(plan)} {summary}"
            steps.append(("failure note", lambda: self.outbox.post(channel, text, [render.section(text)], thread_ts)))
        elif line is None and user:  # the parent message itself was refused: the ack said nothing either
            text = f":x: I could not post in this channel, so {_typed(plan)} did not run: {summary}"
            steps.append(("failure note", lambda: self.outbox.ephemeral(channel, user, text, [render.section(text)])))
        for what, step in steps:
            try:
                step()
            except Exception:
                log.exception("could not finalise the %s of /trace %s", what, plan.label)

    def _tell_followers(
        self, job: Job, plan: Plan, result: Result | None, status: str, summary: str
    ) -> None:
        with self._lock:
            job.meta["finished"] = True
            followers: list[Follower] = job.meta.pop("followers", [])
        emoji = render.STATUS_EMOJI.get(status, "")
        state = f"{emoji} {summary[:300]} (it was already running for someone else)"
        for f in followers:
            later = False
            try:
                # Slack unreachable: tried again later, as the run's own result is (its row kept till then)
                post = partial(self._post_to_follower, f, plan, result, state, [])
                later = self._deliver(post, plan, f.channel, f.work_id)
            except Exception:
                log.exception("could not post /trace %s to %s", plan.label, f.channel)
            finally:
                if not later:
                    self.inbox.done(f.work_id)

    def _post_to_follower(self, f: Follower, plan: Plan, result: Result | None, state: str, parent: list[str]) -> None:
        """The result where ``f`` asked. ``parent``: the parent message this posted on an earlier try (a
        top-level post cannot be looked for by its key, so it is remembered, not posted again)."""
        if f.thread_ts is None and not parent:
            parent.append(self.outbox.post(f.channel, *render.parent(plan.label, f.user, state)))
        elif f.thread_ts is None and (delivery := DELIVERY.get()) is not None:
            delivery.next_key()  # the parent's key, as on the first try: the posts after it keep theirs
        where = f.thread_ts or parent[0]
        if result is not None:
            posting.post_result(self.outbox, f.channel, where, result)
        elif f.thread_ts is not None:
            text = f"{_typed(plan)} — {state}"
            self.outbox.post(f.channel, text, [render.section(text)], f.thread_ts)


def _already_running_here(plan: Plan, link: object) -> render.Rendered:
    label = _typed(plan)
    text = f"{label} is already running" + (
        f": <{link}|follow it in its thread>." if link else "; its answer will appear here shortly."
    )
    return text, [render.section(text)]


def _busy(exc: PoolBusy) -> render.Rendered:
    """The reply to a run the pool could not take."""
    text = f":hourglass: {exc}"
    return text, [render.section(text)]


def _typed(plan: Plan) -> str:
    """The command as its caller typed it, as code it cannot break out of (its words are the caller's)."""
    return render.inline_code(f"/trace {plan.label}")
