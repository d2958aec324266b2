"""The "Save as knowledge" modal submitted: the draft is made on the job pool and posted in the thread."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

from tracebot.slack.save_knowledge import FIX_BLOCK, VIEW_ID, chosen, save


def on_save_submitted(ack: Ack, body: dict[str, Any], view: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    channel, thread_ts, fix_ts = chosen(view)
    if not fix_ts:
        ack(response_action="errors", errors={FIX_BLOCK: "Pick the reply that fixed it."})
        return
    ack()
    tracebot, user = context["service"], body["user"]["id"]
    tracebot.submit(
        lambda job: save(tracebot, client, channel=channel, thread_ts=thread_ts, fix_ts=fix_ts, user=user),
        f"save knowledge {channel}/{thread_ts}",
        lane=channel,
    )


def register(app: App) -> None:
    app.view(VIEW_ID)(on_save_submitted)
