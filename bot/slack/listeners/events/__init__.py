from slack_bolt import App

from bot.slack.listeners.events import mentions, messages


def register(app: App) -> None:
    messages.register(app)
    mentions.register(app)
