"""``message`` events: pasted errors and attached logs in channels, and direct messages."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from tracebot.slack.inbound import from_message

# New content from a person; edits (message_changed) below. Deletions, joins, bot posts are ignored.
ANSWERED_SUBTYPES = {None, "file_share", "thread_broadcast"}


def on_message(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    if event.get("subtype") == "message_changed":
        on_edit(event, body, context)
        return
    if event.get("subtype") not in ANSWERED_SUBTYPES or event.get("bot_id") or not event.get("user"):
        return
    context["service"].on_message(from_message(event, body.get("event_id")))


def on_edit(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    """A person edited their message. Slack also sends ``message_changed`` when it unfurls a link or a
    reply changes a thread's root: only a change to the text by its author (``edited``) is an edit."""
    message = event.get("message") or {}
    edited = message.get("edited") or {}
    if message.get("bot_id") or not message.get("user") or not edited.get("ts"):
        return
    if message.get("text") == (event.get("previous_message") or {}).get("text"):
        return
    msg = from_message({**message, "channel": event.get("channel"), "channel_type": event.get("channel_type")}, body.get("event_id"))
    context["service"].on_edit(msg, str(edited["ts"]))


def register(app: App) -> None:
    app.event("message")(on_message)
