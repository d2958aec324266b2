"""What arrives from a user, independent of how it arrived (Slack HTTP, Socket Mode, the console)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class FileRef:
    name: str
    url: str | None  # url_private_download: needs the bot token
    size: int | None = None
    mimetype: str = ""
    filetype: str = ""
    id: str | None = None  # Slack's file id: the details of a file sent without them are asked for by it
    unreadable: str | None = None  # why tracebot could not learn where the file is (Slack's words)


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

    def fields(self) -> tuple[str, str, str]:
        """The button's value as tracebot wrote it: (diagnosis id, entry id, language of the answer). Answers
        from before the language was added end at the entry: English."""
        diag_id, _, rest = self.value.partition(":")
        entry_id, _, lang = rest.partition(":")
        return diag_id, entry_id, lang or "en"


def mentions(slack_text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in slack_text
