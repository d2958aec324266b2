"""``message`` events: pasted errors and attached logs in channels, and direct messages."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from tracebot.slack.inbound import from_message

# New content from a person. Edits (message_changed), deletions, joins, bot posts are ignored.
ANSWERED_SUBTYPES = {None, "file_share", "thread_broadcast"}


def on_message(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    if event.get("subtype") not in ANSWERED_SUBTYPES or event.get("bot_id") or not event.get("user"):
        return
    context["service"].on_message(from_message(event, body.get("event_id")))


def register(app: App) -> None:
    app.event("message")(on_message)
