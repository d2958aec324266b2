"""Slack's message markup undone: what a user typed, from the text Slack delivers (``&lt;`` for ``<``, a
link's ``<https://x|x>``, a mention's ``<@U123>``, a paste's code fences). Below every layer, so the service
(answers, commands, audit) and the authoring tools (a saved thread made a draft) read one way."""

from __future__ import annotations

import html
import re

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
# Slack rewrites what looks like a link: "https://x" arrives as "<https://x>", an address as
# "<mailto:a@b.c|a@b.c>", and a file name whose suffix is a country's domain ("train.py", "libnccl.so")
# as "<http://train.py|train.py>". What the user pasted is the label (or the bare address).
_LINK = re.compile(r"<((?:https?|ftp|mailto|tel):[^<>|\s]{1,2000})(?:\|([^<>]{0,1000}))?>")
# "<#C0123|general>" (a channel), "<!here>", "<!subteam^S0123|@oncall>", "<!date^1700000000^{date}|Nov 24>"
_CHANNEL = re.compile(r"<#[A-Z0-9]+(?:\|([^<>]{0,200}))?>")
_SPECIAL = re.compile(r"<!(\w+)(?:\^[^<>|]{0,200})?(?:\|([^<>]{0,200}))?>")



def plain_text(slack_text: str, strip_mentions: bool = False) -> str:
    """Slack message text back to what the user pasted: entities decoded, optionally mentions removed."""
    if strip_mentions:
        slack_text = _MENTION.sub("", slack_text)
    if "<" in slack_text:
        slack_text = _LINK.sub(lambda m: m[1] if m[2] is None else m[2], slack_text)
        slack_text = _CHANNEL.sub(lambda m: f"#{m[1] or 'channel'}", slack_text)
        slack_text = _SPECIAL.sub(lambda m: m[2] if m[2] is not None else f"@{m[1]}", slack_text)
    # Code fences are Slack formatting, not log content; removing them (not the line breaks) keeps the
    # line numbers the user sees and lets "[rank3]:" prefixes be read as such.
    return html.unescape(slack_text.replace("```", "")).strip()


def as_slack_sends(typed: str) -> str:
    """``typed`` as Slack delivers what a user types: ``&``, ``<`` and ``>`` escaped (Slack's message
    formatting), so :func:`plain_text` gives back exactly what was typed. For text that never went through
    Slack (the console): a link's or a mention's markup, an entity or a tag in it is text, not markup."""
    return typed.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# A backtick's look-alike (U+02CB), as a code span shows one it cannot hold.
_TICK = "\u02cb"


def code_span(text: str) -> str:
    """``text`` as one inline code span of the neutral markup (and Slack's): its backticks shown as their
    look-alike and its line breaks as spaces. Such a text is often a user's or a job's (a frame's function, a
    log path, a job's failure reason, a pasted line): a backtick in it closed the span early, leaving the rest
    as live formatting (``*``, ``_``, ``~``), and a line break ended the span and started a line of its own
    that read as tracebot's (``…\\n:white_check_mark: all ranks healthy``)."""
    return "`" + " ".join(text.replace("`", _TICK).splitlines()) + "`"
