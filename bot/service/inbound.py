"""What arrives from a user, independent of how it arrived (Slack HTTP, Socket Mode, the console)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, fields
from typing import Any

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
# Slack rewrites what looks like a link: "https://x" arrives as "<https://x>", an address as
# "<mailto:a@b.c|a@b.c>", and a file name whose suffix is a country's domain ("train.py", "libnccl.so")
# as "<http://train.py|train.py>". What the user pasted is the label (or the bare address).
_LINK = re.compile(r"<((?:https?|ftp|mailto|tel):[^<>|\s]{1,2000})(?:\|([^<>]{0,1000}))?>")
# "<#C0123|general>" (a channel), "<!here>", "<!subteam^S0123|@oncall>", "<!date^1700000000^{date}|Nov 24>"
_CHANNEL = re.compile(r"<#[A-Z0-9]+(?:\|([^<>]{0,200}))?>")
_SPECIAL = re.compile(r"<!(\w+)(?:\^[^<>|]{0,200})?(?:\|([^<>]{0,200}))?>")


@dataclass
class FileRef:
    name: str
    url: str | None  # url_private_download: needs the bot token
    size: int | None = None
    mimetype: str = ""
    filetype: str = ""


@dataclass
class Inbound:
    """One user message (pasted text, attached files)."""

    channel: str
    user: str | None
    ts: str
    text: str = ""
    thread_ts: str | None = None
    files: list[FileRef] = field(default_factory=list)
    event_id: str | None = None
    channel_type: str | None = None
    response_url: str | None = None  # the message shortcut's: answers the clicker where tracebot cannot post

    @property
    def thread_root(self) -> str:
        """Where a reply goes: the message's thread, or a new thread under it."""
        return self.thread_ts or self.ts


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def inbound_from_record(data: dict[str, Any]) -> Inbound:
    """The message ``dataclasses.asdict`` wrote to the durable inbox, read back. Fields this version does
    not know are left out (a row written by a newer tracebot, read after a rollback): the message is still
    answered. A field it needs and the row lacks is a TypeError, which the caller logs."""
    files = [FileRef(**_known(FileRef, f)) for f in data.get("files") or []]
    return Inbound(**{**_known(Inbound, data), "files": files})


@dataclass
class SlashCommand:
    channel: str
    user: str
    text: str


@dataclass
class Click:
    action_id: str
    value: str
    user: str
    channel: str
    message_ts: str | None = None
    thread_ts: str | None = None


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


def mentions(slack_text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in slack_text
