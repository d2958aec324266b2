"""The Slack side of the :class:`~tracebot.service.outbox.Outbox` seam: the Web API through slack_sdk."""

from __future__ import annotations

import logging
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from slack_sdk.errors import SlackApiError

from tracebot.service.outbox import Blocks, DownloadRefused, NotInChannel
from tracebot.service.ratelimit import RateLimiter

log = logging.getLogger(__name__)
DOWNLOAD_TIMEOUT_S = 30.0


class SlackOutbox:
    """The Slack Web API through slack_sdk's WebClient (which retries 429s after Retry-After)."""

    def __init__(
        self, client: Any, limiter: RateLimiter | None = None, file_hosts: set[str] | None = None
    ) -> None:
        self.client = client
        self.limiter = limiter or RateLimiter(rate=1.0, burst=3)
        api_host = urlparse(client.base_url).hostname or ""
        # The bot token goes only to Slack's file host (or the configured API host, e.g. a test fake).
        self.file_hosts = file_hosts or {"files.slack.com", api_host}

    def post(
        self, channel: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> str:
        self.limiter.acquire(channel)
        try:
            resp = self.client.chat_postMessage(
                channel=channel,
                text=text,
                blocks=blocks,
                thread_ts=thread_ts,
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            if exc.response.get("error") in ("not_in_channel", "channel_not_found"):
                raise NotInChannel(channel) from exc
            raise
        return str(resp["ts"])

    def update(self, channel: str, ts: str, text: str, blocks: Blocks | None = None) -> None:
        self.client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks or [])

    def ephemeral(
        self, channel: str, user: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> None:
        self.client.chat_postEphemeral(
            channel=channel, user=user, text=text, blocks=blocks, thread_ts=thread_ts
        )

    def upload(self, channel: str, thread_ts: str | None, filename: str, content: bytes, title: str) -> None:
        self.limiter.acquire(channel)
        self.client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, content=content, filename=filename, title=title
        )

    def permalink(self, channel: str, ts: str) -> str:
        return str(self.client.chat_getPermalink(channel=channel, message_ts=ts)["permalink"])

    def publish_home(self, user: str, view: dict[str, Any]) -> None:
        self.client.views_publish(user_id=user, view=view)

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        parsed = urlparse(url)
        if parsed.scheme not in ("https", "http") or parsed.hostname not in self.file_hosts:
            raise DownloadRefused(f"not a Slack file URL: {parsed.hostname}")
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.client.token}"})
        size = 0
        with urllib.request.urlopen(req, timeout=DOWNLOAD_TIMEOUT_S) as resp, dest.open("wb") as out:  # noqa: S310
            while chunk := resp.read(1 << 16):
                size += len(chunk)
                if size > max_bytes:
                    raise DownloadRefused(f"file is larger than {max_bytes // (1 << 20)} MB")
                out.write(chunk)
        return size
