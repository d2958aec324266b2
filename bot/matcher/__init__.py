"""Match pasted text and logs against the knowledge base. Knows nothing about Slack."""

from tracebot.matcher.core import Matcher

__all__ = ["Matcher"]
