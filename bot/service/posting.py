"""Posting rendered answers within Slack's limits: what doesn't fit is attached in full as a file."""

from __future__ import annotations

from tracebot.render import slack as render
from tracebot.render.blocks_text import blocks_to_text
from tracebot.render.slack_limits import fit
from tracebot.result import Result
from tracebot.service.outbox import Outbox


def fitted(rendered: render.Rendered) -> render.Rendered:
    """A reply that travels in an HTTP ack (no file can follow it): cut to the limits."""
    f = fit(*rendered)
    return f.text, f.blocks


def post(
    outbox: Outbox,
    channel: str,
    rendered: render.Rendered,
    thread: str | None,
    filename: str = "tracebot.txt",
) -> str:
    """Post within Slack's limits; when something had to be cut, the full text follows as a file."""
    text, blocks = rendered
    f = fit(text, blocks)
    ts = outbox.post(channel, f.text, f.blocks, thread_ts=thread)
    if f.overflowed:
        outbox.upload(
            channel, thread or ts, filename, blocks_to_text(blocks, text).encode("utf-8"), "Full answer"
        )
    return ts


def post_result(outbox: Outbox, channel: str, thread: str | None, result: Result) -> str:
    """A command's Result and its attachments, in ``thread``."""
    ts = post(outbox, channel, render.result(result), thread, filename="tracebot-result.txt")
    for a in result.attachments:
        outbox.upload(channel, thread or ts, a.filename, a.content, a.title or a.filename)
    return ts
