"""Message shortcut "Diagnose with tracebot": works on any message, including replies in threads."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext

from tracebot.slack.inbound import from_message
from tracebot.slack.listeners.shortcuts import save_knowledge

CALLBACK_ID = "tracebot_diagnose"


def on_diagnose(ack: Ack, shortcut: dict[str, Any], context: BoltContext) -> None:
    ack()
    msg = from_message(shortcut.get("message") or {}, event_id=shortcut.get("action_ts"))
    msg.channel = shortcut["channel"]["id"]
    msg.response_url = shortcut.get("response_url")
    context["service"].on_direct(msg, "shortcut", keys=[f"shortcut:{shortcut.get('trigger_id')}"])


def register(app: App) -> None:
    app.shortcut(CALLBACK_ID)(on_diagnose)
    save_knowledge.register(app)
