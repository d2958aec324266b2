"""A ``/trace`` run on the job pool: parent message, progress line in its thread, result, trace_runs row.

Started from the 3-second ack window (:meth:`TraceRuns.start` only queues); the same work already
running (same dedupe key) is pointed at instead of started again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from tracebot.plugin_api import CommandContext
from tracebot.render import slack as render
from tracebot.service import posting
from tracebot.service.inbound import Inbound
from tracebot.service.jobs import Job, PoolBusy
from tracebot.service.outbox import NotInChannel
from tracebot.service.progress import ProgressLine
from tracebot.service.router import Plan

if TYPE_CHECKING:
    from tracebot.service.service import Tracebot

log = logging.getLogger(__name__)


class TraceRuns:
    def __init__(self, bot: Tracebot) -> None:
        self.bot = bot

    def start(
        self, plan: Plan, channel: str, user: str | None, thread_ts: str | None
    ) -> render.Rendered | None:
        """Queue ``plan``; return a reply for the user now (busy, already running) or None."""
        try:
            job, created = self.bot.trace_jobs.submit(
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
            return channel, self.bot.outbox.post(channel, *parent)
        except NotInChannel:
            if not user:
                raise
            note = (
                f"I'm not in <#{channel}>, so here is your `/trace {render.escape(plan.label)}`. "
                "Invite me there with `/invite @tracebot`."
            )
            self.bot.outbox.post(user, note, [render.section(note)])
            return user, self.bot.outbox.post(user, *parent)

    def _run(self, job: Job, plan: Plan, channel: str, user: str | None, thread_ts: str | None) -> None:
        bot = self.bot
        parent_ts = None
        if thread_ts is None:
            channel, parent_ts = self._open_thread(plan, channel, user)
        thread = thread_ts or parent_ts
        assert thread is not None
        job.meta["permalink"] = bot.outbox.permalink(channel, parent_ts or thread)
        line = ProgressLine(bot.outbox, channel, thread, bot.tunables.progress_interval_s)
        job.on_progress(line.update)
        run_id = bot.store.start_trace_run(
            command=plan.command or plan.kind,
            args=plan.words,
            dedupe_key=plan.key,
            user=user,
            channel=channel,
        )
        status, summary = "error", "failed; see the log"
        try:
            if plan.kind == "diagnose":
                msg = Inbound(channel=channel, user=user, ts=thread, text=plan.text, thread_ts=thread)
                bot.answer(msg, source="command", always=True, thread_ts=thread)
                status, summary = "ok", "diagnosed"
            else:
                ctx = CommandContext(
                    caller=bot.caller(user),
                    config=bot.config,
                    matcher=bot.knowledge.matcher,
                    progress=job.progress,
                    deadline=time.monotonic() + plan.timeout_s,
                )
                result = bot.router.run(plan, ctx)
                posting.post_result(bot.outbox, channel, thread, result, bot.knowledge.kb)
                status, summary = result.status, result.summary
        finally:
            line.close(status)
            if parent_ts is not None:
                emoji = render.STATUS_EMOJI.get(status, "")
                done = render.parent(plan.label, user, f"{emoji} {summary[:300]}")
                bot.outbox.update(channel, parent_ts, *done)
            bot.store.update_trace_run(run_id, status=status, summary=summary[:500])
