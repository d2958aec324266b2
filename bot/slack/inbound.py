"""Slack's message events as the service's :class:`~tracebot.service.inbound.Inbound`."""

from __future__ import annotations

from typing import Any

from tracebot.service.inbound import FileRef, Inbound


def file_ref(f: dict[str, Any]) -> FileRef:
    """One of Slack's file objects. A file shared from another organisation (Slack Connect) comes as its
    id alone, ``file_access: check_file_info``: no name, type, size nor URL until files.info is asked."""
    return FileRef(
        name=str(f.get("name") or f.get("title") or f.get("id") or "file"),
        url=f.get("url_private_download") or f.get("url_private"),
        size=f.get("size"),
        mimetype=str(f.get("mimetype") or ""),
        filetype=str(f.get("filetype") or ""),
        id=str(f["id"]) if f.get("id") else None,
    )


def files_of(message: dict[str, Any]) -> list[FileRef]:
    return [file_ref(f) for f in message.get("files") or [] if isinstance(f, dict)]


def from_message(event: dict[str, Any], event_id: str | None = None) -> Inbound:
    """A ``message`` / ``app_mention`` event, or the ``message`` of a message shortcut."""
    return Inbound(
        channel=str(event.get("channel", "")),
        user=event.get("user"),
        ts=str(event.get("ts", "")),
        text=str(event.get("text") or ""),
        thread_ts=event.get("thread_ts"),
        files=files_of(event),
        event_id=event_id,
        channel_type=event.get("channel_type"),
    )
