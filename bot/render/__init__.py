"""Renderers: the same result as Slack Block Kit (``slack``), terminal text (``text``) and JSON."""
