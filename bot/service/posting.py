"""Posting rendered answers within Slack's limits: what doesn't fit is attached in full as a file."""

from __future__ import annotations

import logging

from tracebot.render import slack as render
from tracebot.render.blocks_text import blocks_to_text
from tracebot.render.slack_limits import NOT_SHOWN, block_chars, fit, layout_free
from tracebot.result import Result
from tracebot.service.outbox import Outbox, PostRefused, UploadRefused

log = logging.getLogger(__name__)
PRIVATE_ERRORS = frozenset({"usage", "not_allowed", "not_here"})  # said only to the one who asked
# Slack's refusals of a message's blocks, not of the message: the same answer goes as text. Slack refuses
# blocks far under its documented 40,000 characters (msg_blocks_too_long near 13,000), and a block Slack
# changes its rules for is invalid_blocks.
BLOCKS_REFUSED = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long", "msg_too_long"})


def is_private(result: Result) -> bool:
    """A refusal or a usage error: it concerns the caller alone, so it is never posted in the channel."""
    return result.status == "error" and isinstance(result.data, dict) and result.data.get("error") in PRIVATE_ERRORS


def tell_caller(outbox: Outbox, channel: str, user: str, result: Result, thread: str | None) -> None:
    """``result`` ephemeral to ``user`` (in ``thread``): nobody else in the channel sees it."""
    text, blocks = fitted(render.result(result))
    outbox.ephemeral(channel, user, text, blocks, thread)


def fitted(rendered: render.Rendered) -> render.Rendered:
    """A reply only its asker sees (an ephemeral, an HTTP ack, a response_url: no file can follow it), cut
    to the limits and saying so without promising a file."""
    f = fit(*rendered, rest=NOT_SHOWN)
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
    try:
        ts = outbox.post(channel, f.text, f.blocks, thread_ts=thread)
    except PostRefused as exc:
        if str(exc) not in BLOCKS_REFUSED or not blocks:
            raise
        log.warning("Slack refused an answer's blocks (%s); posting it as text", exc)
        # one section's worth (the rest in the file): the answer as text, without its buttons
        f = fit(text, [render.section(layout_free(f.text, f.blocks))])
        ts = outbox.post(channel, f.blocks[0]["text"]["text"], None, thread_ts=thread)
    if f.overflowed:
        attach(outbox, channel, thread or ts, filename, blocks_to_text(blocks, text).encode("utf-8"), "Full answer")
    return ts


def attach(outbox: Outbox, channel: str, thread: str, filename: str, content: bytes, title: str) -> bool:
    """Upload a file into ``thread``. The message it belongs to is already posted, so a refused upload
    is said in the thread (the message promised a file) rather than failing the answer it completes."""
    try:
        outbox.upload(channel, thread, filename, content, title)
        return True
    except Exception as exc:
        log.warning("could not attach %s in %s/%s", filename, channel, thread, exc_info=True)
        reason = str(exc) if isinstance(exc, UploadRefused) else type(exc).__name__
        text = f":warning: I could not attach {render.inline_code(filename)} (Slack said: {render.escape(reason)}); what is above is all I could post here."
        outbox.post(channel, text, [render.section(text)], thread_ts=thread)
        return False


SUMMARY_CHARS = 3500  # about three screens: a longer result is summarised in the thread, in full in a file
RESULT_FILE = "tracebot-result.txt"


def rendered_chars(rendered: render.Rendered) -> int:
    return sum(block_chars(b) for b in rendered[1])


def post_result(outbox: Outbox, channel: str, thread: str | None, result: Result) -> str:
    """A command's Result and its attachments, in ``thread``. Past a few screens nobody reads it in the
    thread: a short summary goes there and the whole result follows as a file."""
    full = render.result(result)
    if rendered_chars(full) <= SUMMARY_CHARS:
        ts = post(outbox, channel, full, thread, filename=RESULT_FILE)
    else:
        ts = post(outbox, channel, render.result_summary(result, RESULT_FILE), thread, filename=RESULT_FILE)
        attach(outbox, channel, thread or ts, RESULT_FILE, blocks_to_text(full[1], full[0]).encode("utf-8"), "Full result")
    for a in result.attachments:
        attach(outbox, channel, thread or ts, a.filename, a.content, a.title or a.filename)
    return ts
