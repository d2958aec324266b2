"""Where tracebot's replies go. :class:`Outbox` is the seam between the transport-neutral service and a
transport: Slack's Web API (:class:`tracebot.slack.outbox.SlackOutbox`) or the terminal (``tracebot console``).
Everything above it (the service, the renderers) is the same for both."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tracebot.service.inbound import FileRef
from tracebot.sizes import size_text

log = logging.getLogger(__name__)
Blocks = list[dict[str, Any]]


@dataclass
class Delivery:
    """The accepted work a job is answering. Each message the job posts gets a key from it (the work's id
    and the post's place in the job), which the transport attaches to the message: a post Slack may have
    taken before failing is looked for by it before it is sent again, and so is every post of a job run
    again (after Slack was down, or after a restart), so an answer that landed is not posted twice."""

    work: str
    again: bool = False  # an earlier run of this job may have posted: look before each post
    posts: int = 0

    def next_key(self) -> str:
        self.posts += 1
        return f"{self.work}.{self.posts}"


# Set by the service around a job (one thread runs one job); read by the transport's ``post``.
DELIVERY: ContextVar[Delivery | None] = ContextVar("tracebot_delivery", default=None)


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
    """Slack did not answer a post (timeout, connection broken), or answered it with a server error through
    every retry: the message may or may not be in the channel; the message is what went wrong. Slack is
    unreachable, not refusing: the work is kept and tried again (:mod:`tracebot.service.redelivery`)."""


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
