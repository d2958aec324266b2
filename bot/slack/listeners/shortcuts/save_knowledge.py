"""Message shortcut "Save as knowledge": opens the modal that asks which reply fixed the thread's error."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

from tracebot.slack.save_knowledge import SHORTCUT_ID, open_modal


def on_save_knowledge(ack: Ack, shortcut: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    ack()
    # The trigger id lives three seconds: the modal opens here, not on the job pool.
    open_modal(context["service"], client, shortcut["trigger_id"], shortcut["channel"]["id"], shortcut["message"])


def register(app: App) -> None:
    app.shortcut(SHORTCUT_ID)(on_save_knowledge)
