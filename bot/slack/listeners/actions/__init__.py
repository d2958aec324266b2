"""The buttons under an answer: Helpful, Not this, Other matches."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt import Ack, App, BoltContext

from tracebot.render.slack import ACTIONS
from tracebot.service.inbound import Click
from tracebot.service.jobs import PoolBusy

ACTION_IDS = re.compile("^(" + "|".join(ACTIONS) + ")$")


def on_feedback(ack: Ack, body: dict[str, Any], action: dict[str, Any], context: BoltContext) -> None:
    ack()
    container = body.get("container") or {}
    message = body.get("message") or {}
    click = Click(
        action_id=action["action_id"],
        value=action.get("value") or "",
        user=body["user"]["id"],
        channel=(body.get("channel") or {}).get("id") or container.get("channel_id", ""),
        message_ts=container.get("message_ts") or message.get("ts"),
        thread_ts=container.get("thread_ts") or message.get("thread_ts"),
    )
    tracebot = context["service"]
    try:
        tracebot.submit(lambda job: tracebot.on_click(click), f"click {click.action_id}")
    except PoolBusy:
        tracebot.tell_busy(click)


def register(app: App) -> None:
    app.action(ACTION_IDS)(on_feedback)
