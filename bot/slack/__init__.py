"""tracebot in Slack. ``handlers`` is plain Python over an :class:`~tracebot.slack.outbox.Outbox`; only
``app``, ``listeners`` and ``outbox.SlackOutbox`` know Bolt / slack_sdk."""
