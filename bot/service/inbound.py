"""What arrives from a user, independent of how it arrived (Slack HTTP, Socket Mode, the console)."""

from __future__ import annotations

from dataclasses import dataclass, field


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


def mentions(slack_text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in slack_text
