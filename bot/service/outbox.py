"""Where tracebot's replies go. :class:`Outbox` is the seam between the transport-neutral service and a
transport: Slack's Web API (:class:`tracebot.slack.outbox.SlackOutbox`) or the terminal (``tracebot console``).
Everything above it (the service, the renderers) is the same for both."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

from tracebot.service.inbound import FileRef
from tracebot.sizes import size_text

log = logging.getLogger(__name__)
Blocks = list[dict[str, Any]]


class NotInChannel(RuntimeError):
    """tracebot is not a member of the channel (a /trace typed where it was never invited)."""


class DownloadRefused(RuntimeError):
    """A file we will not fetch (too large, not on Slack's file host); the message says why."""


class DownloadTooLarge(DownloadRefused):
    """The file is past the size tracebot reads; the message says so after the file's name."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(too_large(max_bytes))
        self.max_bytes = max_bytes


def too_large(max_bytes: int) -> str:
    """Why a file was not read, in words: ``larger than 1 MB``, ``larger than 512 KB`` (a limit under a
    megabyte said as ``0 MB`` read as "any file")."""
    return f"larger than {size_text(max_bytes)}"


class PostRefused(RuntimeError):
    """Slack would not take a message (``invalid_blocks``, ``msg_too_long``, ``is_archived``...), after its
    retries; the message is Slack's reason."""


class PostUnconfirmed(RuntimeError):
    """Slack did not answer a post (timeout, connection broken): the message may or may not be in the
    channel; the message is what went wrong."""


class UploadRefused(RuntimeError):
    """Slack would not take a file (uploads disabled, too large, a channel it cannot go to); the message
    is Slack's reason."""


class Outbox(Protocol):
    def post(
        self, channel: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> str:
        """Post a message; return its ts."""

    def update(self, channel: str, ts: str, text: str, blocks: Blocks | None = None) -> None: ...

    def ephemeral(
        self, channel: str, user: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> None: ...

    def upload(
        self, channel: str, thread_ts: str | None, filename: str, content: bytes, title: str
    ) -> None: ...

    def permalink(self, channel: str, ts: str) -> str: ...

    def publish_home(self, user: str, view: dict[str, Any]) -> None: ...

    def respond(self, response_url: str, text: str, blocks: Blocks | None = None) -> None:
        """Answer an interaction through its ``response_url``, seen only by the user who started it."""
        ...

    def open_dm(self, user: str) -> str:
        """The id of tracebot's direct-message conversation with ``user`` (opened if need be)."""
        ...

    def members(self, channel: str) -> set[str] | None:
        """Who is in ``channel``; None when that cannot be known (then only a user's own count)."""
        ...

    def file_info(self, file_id: str) -> FileRef:
        """A shared file's name, type, size and URL, asked for by its id (``DownloadRefused`` when the
        transport will not say)."""
        ...

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        """Save a user's file to ``dest``; return its size. Raise DownloadRefused past ``max_bytes``."""
