"""The Slack side of the :class:`~tracebot.service.outbox.Outbox` seam: the Web API through slack_sdk."""

from __future__ import annotations

import logging
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from tracebot.service.inbound import FileRef
from tracebot.service.outbox import (
    DELIVERY,
    Blocks,
    DownloadRefused,
    DownloadTooLarge,
    NotInChannel,
    PostRefused,
    PostUnconfirmed,
    UploadRefused,
)
from tracebot.service.ratelimit import RateLimiter
from tracebot.slack.inbound import file_ref

log = logging.getLogger(__name__)
DOWNLOAD_TIMEOUT_S = 30.0
MAX_REDIRECTS = 3
# Where Slack serves files (``url_private_download``); the bot token goes nowhere else.
SLACK_FILE_ORIGINS = frozenset({("https", "files.slack.com", 443)})
_DEFAULT_PORTS = {"https": 443, "http": 80}
# Slack's passing server errors: retried. chat.postMessage is retried here, by the outbox, which first
# looks whether the failed post landed anyway; every other method by the client (make_client).
SERVER_ERRORS = frozenset({500, 502, 503, 504})
POST_RETRY_WAITS_S = (0.5, 1.5)  # between the tries of a post Slack answered with a server error
POST_METADATA_TYPE = "tracebot_post"  # the message metadata's event_type; its payload says which post
THREAD_PAGES = 5  # pages of conversations.replies read looking for a post (200 messages each)

Origin = tuple[str, str, int]


def origin(url: str) -> Origin | None:
    """``(scheme, host, port)`` of ``url``, the port filled in; None when it has no host or a bad port."""
    parsed = urlparse(url)
    try:
        port = parsed.port or _DEFAULT_PORTS.get(parsed.scheme, 0)
    except ValueError:
        return None
    if not parsed.hostname or not port:
        return None
    return parsed.scheme.lower(), parsed.hostname.lower(), port


def file_origins(api_url: str | None) -> frozenset[Origin]:
    """Slack's file host, plus, for tests only, the exact scheme+host+port of ``SLACK_API_URL`` (the fake
    Slack on loopback serves its files there over http). Nothing else ever gets the bot token."""
    extra = origin(api_url) if api_url else None
    return SLACK_FILE_ORIGINS | {extra} if extra else SLACK_FILE_ORIGINS


def _is_html(url: str) -> bool:
    """The file itself is a web page (its name, the last part of Slack's file URL, says so)."""
    return urlparse(url).path.lower().endswith((".html", ".htm"))


class _RedirectGuard(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an allowed origin; anywhere else the download is refused, so the
    ``Authorization`` header (which urllib copies onto the redirected request) never leaves them."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, allowed: frozenset[Origin]) -> None:
        super().__init__()
        self.allowed = allowed

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if origin(newurl) not in self.allowed:
            raise DownloadRefused(f"the file URL redirects off Slack's file host, to {urlparse(newurl).hostname}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class SlackOutbox:
    """The Slack Web API through slack_sdk's WebClient (which retries 429s after Retry-After)."""

    def __init__(
        self, client: Any, limiter: RateLimiter | None = None, api_url: str | None = None
    ) -> None:
        self.client = client
        self.limiter = limiter or RateLimiter(rate=1.0, burst=3)
        # The bot token goes only to Slack's file host over https (and, in tests, the fake's exact origin).
        self.file_origins = file_origins(api_url)
        self._opener = urllib.request.build_opener(_RedirectGuard(self.file_origins))

    def post(
        self, channel: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> str:
        """Post a message. One that belongs to accepted work (:data:`DELIVERY`) carries its key in the
        message's metadata; a server error is tried again after a look in the thread for that key, so a
        post Slack took before failing is not posted twice (nor is one an earlier run of the job posted)."""
        delivery = DELIVERY.get()
        key = delivery.next_key() if delivery is not None else None
        if key is not None and thread_ts is not None and delivery is not None and delivery.again:
            found = self._posted(channel, thread_ts, key)
            if found is not None:
                log.info("post %s is already in %s/%s (an earlier try landed); not posted again", key, channel, thread_ts)
                return found
        extra: dict[str, Any] = {}
        if key is not None:
            extra["metadata"] = {"event_type": POST_METADATA_TYPE, "event_payload": {"post": key}}
        for attempt in range(len(POST_RETRY_WAITS_S) + 1):
            self.limiter.acquire(channel)
            try:
                resp = self.client.chat_postMessage(
                    channel=channel,
                    text=text,
                    blocks=blocks,
                    thread_ts=thread_ts,
                    unfurl_links=False,
                    unfurl_media=False,
                    **extra,
                )
                return str(resp["ts"])
            except SlackApiError as exc:
                status = exc.response.status_code
                if exc.response.get("error") in ("not_in_channel", "channel_not_found"):
                    raise NotInChannel(channel) from exc
                if status not in SERVER_ERRORS:
                    raise PostRefused(str(exc.response.get("error") or status)) from exc
                # Slack answered, so the request is over: if it posted before failing, the thread says so.
                found = self._posted(channel, thread_ts, key) if key is not None and thread_ts is not None else None
                if found is not None:
                    log.warning("Slack answered %s to a post it had taken (%s); not posted again", status, key)
                    return found
                if attempt == len(POST_RETRY_WAITS_S):
                    raise PostUnconfirmed(f"HTTP {status}") from exc
                log.warning("Slack answered %s to a post in %s; trying again", status, channel)
                time.sleep(POST_RETRY_WAITS_S[attempt])
            except OSError as exc:  # a timeout, a broken connection (URLError is one too): Slack may have posted it
                # Not tried again: the first request may still be on its way, and land after a second.
                raise PostUnconfirmed(type(exc).__name__) from exc
        raise AssertionError("unreachable")

    def _posted(self, channel: str, thread_ts: str, key: str) -> str | None:
        """The ts of tracebot's message carrying ``key`` in the thread, if it is there. A thread Slack
        will not read (or cannot be reached to read) counts as "not there": the post is tried."""
        cursor = None
        try:
            for _ in range(THREAD_PAGES):
                page = self.client.conversations_replies(
                    channel=channel, ts=thread_ts, include_all_metadata=True, limit=200, cursor=cursor
                )
                for m in page.get("messages") or []:
                    meta = m.get("metadata") or {}
                    if meta.get("event_type") == POST_METADATA_TYPE and (meta.get("event_payload") or {}).get("post") == key:
                        return str(m["ts"])
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return None
        except (SlackApiError, OSError) as exc:
            log.warning("could not read %s/%s to look for post %s: %s", channel, thread_ts, key, exc)
        return None

    def update(self, channel: str, ts: str, text: str, blocks: Blocks | None = None) -> None:
        """Edit a message in place. Slack's server errors (after the client's retries) and a timeout are
        :class:`PostUnconfirmed` (the edit is tried again later: editing twice is harmless); a refusal
        (``cant_update_message``, ``message_not_found``...) is :class:`PostRefused`."""
        try:
            self.client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks or [])
        except SlackApiError as exc:
            status = exc.response.status_code
            if status in SERVER_ERRORS:
                raise PostUnconfirmed(f"HTTP {status}") from exc
            raise PostRefused(str(exc.response.get("error") or status)) from exc
        except OSError as exc:
            raise PostUnconfirmed(type(exc).__name__) from exc

    def ephemeral(
        self, channel: str, user: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> None:
        self.client.chat_postEphemeral(
            channel=channel, user=user, text=text, blocks=blocks, thread_ts=thread_ts
        )

    def upload(self, channel: str, thread_ts: str | None, filename: str, content: bytes, title: str) -> None:
        self.limiter.acquire(channel)
        try:
            self.client.files_upload_v2(
                channel=channel, thread_ts=thread_ts, content=content, filename=filename, title=title
            )
        except SlackApiError as exc:
            raise UploadRefused(str(exc.response.get("error") or exc.response.status_code)) from exc

    def permalink(self, channel: str, ts: str) -> str:
        return str(self.client.chat_getPermalink(channel=channel, message_ts=ts)["permalink"])

    def respond(self, response_url: str, text: str, blocks: Blocks | None = None) -> None:
        # Only Slack's own hooks (or, in tests, the fake's origin) get what tracebot says.
        if origin(response_url) not in {("https", "hooks.slack.com", 443), *self.file_origins}:
            raise NotInChannel(f"response_url off Slack: {urlparse(response_url).hostname}")
        WebhookClient(response_url).send(text=text, blocks=blocks, response_type="ephemeral")

    def open_dm(self, user: str) -> str:
        # A user id is not a channel: posting to it only works by a legacy fallback Slack may drop.
        return str(self.client.conversations_open(users=user)["channel"]["id"])

    def members(self, channel: str) -> set[str] | None:
        found: set[str] = set()
        cursor = None
        try:
            while True:
                page = self.client.conversations_members(channel=channel, cursor=cursor, limit=1000)
                found.update(page.get("members") or [])
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return found
        except SlackApiError:
            log.warning("cannot list the members of %s", channel, exc_info=True)
            return None

    def thread_text(self, channel: str, thread_ts: str) -> str:
        """The text of the thread's first messages, its people's alone ("" when Slack will not say)."""
        try:
            page = self.client.conversations_replies(channel=channel, ts=thread_ts, limit=20)
        except (SlackApiError, OSError) as exc:
            log.warning("could not read %s/%s: %s", channel, thread_ts, exc)
            return ""
        return "\n".join(str(m.get("text") or "") for m in page.get("messages") or [] if not m.get("bot_id"))

    def publish_home(self, user: str, view: dict[str, Any]) -> None:
        self.client.views_publish(user_id=user, view=view)

    def file_info(self, file_id: str) -> FileRef:
        try:
            return file_ref(self.client.files_info(file=file_id)["file"])
        except SlackApiError as exc:
            raise DownloadRefused(f"Slack would not say where it is: {exc.response.get('error')}") from exc

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        if origin(url) not in self.file_origins:
            raise DownloadRefused(f"not a Slack file URL: {urlparse(url).hostname}")
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.client.token}"})
        size = 0
        with self._opener.open(req, timeout=DOWNLOAD_TIMEOUT_S) as resp, dest.open("wb") as out:
            if resp.headers.get_content_type() == "text/html" and not _is_html(url):
                # What Slack serves, with 200, to a token without files:read: read as a log, its sign-in
                # page would be answered "no known error matched".
                raise DownloadRefused("Slack sent its sign-in page, not the file: tracebot needs the files:read scope")
            while chunk := resp.read(1 << 16):
                size += len(chunk)
                if size > max_bytes:
                    raise DownloadTooLarge(max_bytes)
                out.write(chunk)
        return size
