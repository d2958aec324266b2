"""A ``/trace`` run on the job pool: parent message, progress line in its thread, result, trace_runs row.

Started from the 3-second ack window (:meth:`TraceRuns.start` only queues); the same work already
running (same dedupe key) is pointed at instead of started again. Built from the objects it uses, so
it can be read (and tested) without the rest of the service.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tracebot.plugin_api import Caller
from tracebot.render import slack as render
from tracebot.service import posting
from tracebot.service.jobs import Job, JobPool, PoolBusy
from tracebot.service.outbox import NotInChannel, Outbox
from tracebot.service.plugin_host import BUILTIN_COMMANDS
from tracebot.service.progress import ProgressLine
from tracebot.service.router import Plan, Router
from tracebot.store import Store

log = logging.getLogger(__name__)


class TraceRuns:
    def __init__(
        self,
        *,
        outbox: Outbox,
        store: Store,
        pool: JobPool,
        router: Router,
        caller: Callable[[str | None], Caller],
        answer_text: Callable[[str, str, str | None, str], None],
        progress_interval_s: float = 1.0,
    ) -> None:
        self.outbox = outbox
        self.store = store
        self.pool = pool
        self.router = router
        self.caller = caller
        self.answer_text = answer_text  # posts the answer to ``/trace diagnose <text>`` in a thread
        self.progress_interval_s = progress_interval_s

    def start(
        self, plan: Plan, channel: str, user: str | None, thread_ts: str | None
    ) -> render.Rendered | None:
        """Queue ``plan``; return a reply for the user now (busy, already running) or None."""
        try:
            job, created = self.pool.submit(
                lambda job: self._run(job, plan, channel, user, thread_ts), label=plan.label, key=plan.key
            )
        except PoolBusy as exc:
            text = f":hourglass: {exc}"
            return text, [render.section(text)]
        if created:
            return None
        link = job.meta.get("permalink")
        text = f"`/trace {render.escape(plan.label)}` is already running" + (
            f": <{link}|follow it in its thread>." if link else "; its answer will appear here shortly."
        )
        return text, [render.section(text)]

    def _open_thread(self, plan: Plan, channel: str, user: str | None) -> tuple[str, str]:
        """Post the parent message; where tracebot is not a member, in the user's DM with it instead."""
        parent = render.parent(plan.label, user, "running…")
        try:
            return channel, self.outbox.post(channel, *parent)
        except NotInChannel:
            if not user:
                raise
            note = (
                f"I'm not in <#{channel}>, so here is your `/trace {render.escape(plan.label)}`. "
                "Invite me there with `/invite @tracebot`."
            )
            self.outbox.post(user, note, [render.section(note)])
            return user, self.outbox.post(user, *parent)

    def _run(self, job: Job, plan: Plan, channel: str, user: str | None, thread_ts: str | None) -> None:
        assert plan.step is not None
        parent_ts = None
        if thread_ts is None:
            channel, parent_ts = self._open_thread(plan, channel, user)
        thread = thread_ts or parent_ts
        assert thread is not None
        job.meta["permalink"] = self.outbox.permalink(channel, parent_ts or thread)
        line = ProgressLine(self.outbox, channel, thread, self.progress_interval_s)
        job.on_progress(line.update)
        run_id = self.store.start_trace_run(
            command=plan.command,
            args=plan.words,
            dedupe_key=plan.key,
            user=user,
            channel=channel,
        )
        status, summary = "error", "failed; see the log"
        try:
            if plan.step.command.plugin == BUILTIN_COMMANDS and plan.command == "diagnose":
                self.answer_text(plan.step.kwargs["text"], channel, user, thread)
                status, summary = "ok", "diagnosed"
            else:
                ctx = self.router.context(plan.step, self.caller(user), channel, progress=job.progress)
                result = self.router.run(plan, ctx)
                posting.post_result(self.outbox, channel, thread, result)
                status, summary = result.status, result.summary
        finally:
            line.close(status)
            if parent_ts is not None:
                emoji = render.STATUS_EMOJI.get(status, "")
                done = render.parent(plan.label, user, f"{emoji} {summary[:300]}")
                self.outbox.update(channel, parent_ts, *done)
            self.store.update_trace_run(run_id, status=status, summary=summary[:500])
