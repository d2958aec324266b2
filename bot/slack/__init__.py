"""tracebot in Slack. ``handlers`` is plain Python over an :class:`~bot.slack.outbox.Outbox`; only
``app``, ``listeners`` and ``outbox.SlackOutbox`` know Bolt / slack_sdk."""
