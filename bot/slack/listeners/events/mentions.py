"""``@tracebot <text>``: always answered, in the mention's thread."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from tracebot.slack.inbound import from_message


def on_mention(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    if event.get("bot_id"):
        return
    context["service"].on_direct(from_message(event, body.get("event_id")), "mention")


def register(app: App) -> None:
    app.event("app_mention")(on_mention)
