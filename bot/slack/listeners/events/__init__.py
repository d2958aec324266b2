from slack_bolt import App

from tracebot.slack.listeners.events import mentions, messages


def register(app: App) -> None:
    messages.register(app)
    mentions.register(app)
