"""Socket Mode: the app opens a websocket to Slack (no public URL needed); the default for internal
deployments. Events arrive in envelopes that Bolt acks on the same socket."""

from __future__ import annotations

from typing import Any

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler


def socket_mode_handler(app: App, config: Any) -> SocketModeHandler:
    """Connect with the app-level token; ``apps.connections.open`` goes through the app's WebClient, so
    ``SLACK_API_URL`` applies here too."""
    if not config.slack_app_token:
        raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an xapp- app-level token)")
    return SocketModeHandler(app, config.slack_app_token, web_client=app.client)
