"""``/trace``: acked at once (with the answer itself when it is quick); slow work goes to the job pool."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext

from tracebot.service.inbound import SlashCommand

COMMAND = "/trace"


def on_trace(ack: Ack, command: dict[str, Any], context: BoltContext) -> None:
    reply = context["service"].on_command(
        SlashCommand(channel=command["channel_id"], user=command["user_id"], text=command.get("text") or "")
    )
    if reply is None:
        ack()
    else:
        text, blocks = reply
        ack(text=text, blocks=blocks, response_type="ephemeral")


def register(app: App) -> None:
    app.command(COMMAND)(on_trace)
