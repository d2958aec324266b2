"""The one door out: every message, edit, ephemeral, upload and App Home view passes the scrubber here.

The :class:`~tracebot.service.service.Service` wraps whatever outbox it is given (Slack, the console) in
:class:`EgressOutbox`, so no call site can forget to scrub. It also defuses broadcast mentions
(``<!here>``, ``<!channel>``, ``<!everyone>``, ``<!subteam^…>``): tracebot never sends one on purpose,
so one in an outgoing message can only come from user text that a renderer failed to escape.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tracebot.render.slack import Rendered
from tracebot.secrets import Scrubber, map_strings
from tracebot.service.inbound import FileRef
from tracebot.service.outbox import Blocks, DownloadRefused, Outbox

_BROADCAST = re.compile(r"<(!(?:here|channel|everyone|group|subteam\^)[^>]*)>")  # group: the legacy @channel


def defuse(text: str) -> str:
    return _BROADCAST.sub(r"&lt;\1&gt;", text)


class EgressOutbox:
    """An :class:`Outbox` that scrubs secrets out of, and defuses broadcasts in, everything it sends."""

    def __init__(self, inner: Outbox, scrubber: Scrubber) -> None:
        self.inner = inner
        self.scrubber = scrubber

    def text(self, text: str) -> str:
        return defuse(self.scrubber.text(text))

    def data(self, value: Any) -> Any:
        return map_strings(value, self.text)

    def rendered(self, rendered: Rendered) -> Rendered:
        """A reply that leaves another way (the HTTP acknowledgement of a slash command)."""
        text, blocks = rendered
        return self.text(text), self.data(blocks)

    def post(
        self, channel: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> str:
        return self.inner.post(channel, self.text(text), self.data(blocks), thread_ts=thread_ts)

    def update(self, channel: str, ts: str, text: str, blocks: Blocks | None = None) -> None:
        self.inner.update(channel, ts, self.text(text), self.data(blocks))

    def ephemeral(
        self, channel: str, user: str, text: str, blocks: Blocks | None = None, thread_ts: str | None = None
    ) -> None:
        self.inner.ephemeral(channel, user, self.text(text), self.data(blocks), thread_ts)

    def upload(self, channel: str, thread_ts: str | None, filename: str, content: bytes, title: str) -> None:
        self.inner.upload(
            channel, thread_ts, self.scrubber.text(filename), self.scrubber.content(content), self.text(title)
        )

    def permalink(self, channel: str, ts: str) -> str:
        return self.inner.permalink(channel, ts)

    def respond(self, response_url: str, text: str, blocks: Blocks | None = None) -> None:
        self.inner.respond(response_url, self.text(text), self.data(blocks))

    def open_dm(self, user: str) -> str:
        open_dm = getattr(self.inner, "open_dm", None)
        return open_dm(user) if open_dm is not None else user

    def members(self, channel: str) -> set[str] | None:
        members = getattr(self.inner, "members", None)
        return members(channel) if members is not None else None

    def thread_text(self, channel: str, thread_ts: str) -> str:
        """The text of a thread's messages ("" when the transport cannot read threads)."""
        thread_text = getattr(self.inner, "thread_text", None)
        return thread_text(channel, thread_ts) if thread_text is not None else ""

    def publish_home(self, user: str, view: dict[str, Any]) -> None:
        self.inner.publish_home(user, self.data(view))

    def file_info(self, file_id: str) -> FileRef:
        file_info = getattr(self.inner, "file_info", None)
        if file_info is None:
            raise DownloadRefused("this transport cannot look files up")
        return file_info(file_id)

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        return self.inner.download(url, dest, max_bytes)
