"""Bolt listeners, one small module per kind. Each acks, hands off to :class:`Service`, and returns."""

from __future__ import annotations

from slack_bolt import App

from tracebot.slack.listeners import actions, commands, events, shortcuts, views


def register_all(app: App) -> None:
    for module in (events, commands, shortcuts, actions, views):
        module.register(app)
