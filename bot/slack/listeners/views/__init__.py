"""The App Home tab, published when a user opens it."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from tracebot.slack.listeners.views import save_knowledge


def on_home_opened(event: dict[str, Any], context: BoltContext) -> None:
    if event.get("tab", "home") != "home":
        return
    tracebot = context["service"]
    user = event["user"]
    tracebot.submit(lambda job: tracebot.on_home_opened(user), f"home {user}")


def register(app: App) -> None:
    app.event("app_home_opened")(on_home_opened)
    save_knowledge.register(app)
