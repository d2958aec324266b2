"""Slack request payloads shaped as Slack documents them (Events API event_callback wrapper, message /
app_mention / app_home_opened events, slash-command form fields, message_action and block_actions
interaction payloads), and the v0 request signature Slack puts on each request."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import uuid
from typing import Any
from urllib.parse import urlencode

TEAM = "T0001"
APP = "A0001"
_seq = itertools.count(1)


def sign(secret: str, body: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 signature: HMAC-SHA256 of ``v0:{timestamp}:{body}`` with the signing secret."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def new_ts() -> str:
    n = next(_seq)
    return f"{1763700000 + n}.{n:06d}"


def event_callback(event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
    return {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "api_app_id": APP,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": TEAM,
                "user_id": "UTRACEBOT",
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": "4-eyJldCI6Im1lc3NhZ2UifQ",
    }


def message(
    text: str,
    *,
    channel: str = "C0TRAIN",
    user: str = "U0ALICE",
    ts: str | None = None,
    thread_ts: str | None = None,
    channel_type: str = "channel",
    **extra: Any,
) -> dict[str, Any]:
    ts = ts or new_ts()
    event = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel_type": channel_type,
        "client_msg_id": str(uuid.uuid4()),
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
        event["parent_user_id"] = "U0BOB"
    event.update(extra)
    return event


def edited(original: dict[str, Any], text: str, *, edit_ts: str | None = None) -> dict[str, Any]:
    """The ``message_changed`` event Slack sends when the author of ``original`` changes its text to
    ``text`` (docs.slack.dev/reference/events/message/message_changed): the message as it is now, with
    who edited it and when, and the message as it was."""
    edit_ts = edit_ts or new_ts()
    now = {k: v for k, v in original.items() if k not in ("channel", "channel_type", "event_ts")}
    now.update({"text": text, "edited": {"user": original["user"], "ts": edit_ts}})
    return {
        "type": "message",
        "subtype": "message_changed",
        "hidden": True,
        "channel": original["channel"],
        "channel_type": original.get("channel_type", "channel"),
        "message": now,
        "previous_message": {k: v for k, v in original.items() if k not in ("channel", "channel_type", "event_ts")},
        "event_ts": edit_ts,
        "ts": edit_ts,
    }


def file_share(text: str, files: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    event = message(text, **kw)
    event.update({"subtype": "file_share", "files": files, "upload": False, "display_as_bot": False})
    return event


def slack_file(
    name: str, url: str, size: int, mimetype: str = "text/plain", filetype: str = "text"
) -> dict[str, Any]:
    fid = f"F{uuid.uuid4().hex[:9].upper()}"
    return {
        "id": fid,
        "created": int(time.time()),
        "timestamp": int(time.time()),
        "name": name,
        "title": name,
        "mimetype": mimetype,
        "filetype": filetype,
        "pretty_type": "Plain Text",
        "user": "U0ALICE",
        "editable": True,
        "size": size,
        "mode": "snippet" if filetype == "text" else "hosted",
        "is_external": False,
        "external_type": "",
        "is_public": False,
        "public_url_shared": False,
        "url_private": url.replace("/download/", "/"),
        "url_private_download": url,
        "permalink": f"https://fake.slack.com/files/U0ALICE/{fid}/{name}",
    }


def connect_file(file: dict[str, Any]) -> dict[str, Any]:
    """``file`` as a message event carries it when it was shared from another organisation (Slack
    Connect): its id alone, to be looked up with files.info."""
    return {"id": file["id"], "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": ""}


def mention(text: str, **kw: Any) -> dict[str, Any]:
    event = message(f"<@UTRACEBOT> {text}", **kw)
    event["type"] = "app_mention"
    event.pop("channel_type")
    return event


def home_opened(user: str = "U0ALICE") -> dict[str, Any]:
    return {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home", "event_ts": new_ts()}


def slash(
    text: str,
    *,
    channel: str = "C0TRAIN",
    user: str = "U0ALICE",
    response_url: str = "https://hooks.slack.com/commands/T0001/1/abc",
) -> str:
    return urlencode(
        {
            "token": "legacy-verification-token",
            "team_id": TEAM,
            "team_domain": "fake",
            "channel_id": channel,
            "channel_name": "training",
            "user_id": user,
            "user_name": user.lower(),
            "command": "/trace",
            "text": text,
            "api_app_id": APP,
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": f"{next(_seq)}.1.abc",
        }
    )


def message_action(
    msg: dict[str, Any],
    *,
    channel: str = "C0TRAIN",
    user: str = "U0BOB",
    callback_id: str = "tracebot_diagnose",
    response_url: str = "https://hooks.slack.com/app/T0001/1/def",
) -> str:
    payload = {
        "type": "message_action",
        "token": "legacy-verification-token",
        "action_ts": new_ts(),
        "team": {"id": TEAM, "domain": "fake"},
        "user": {"id": user, "name": user.lower()},
        "channel": {"id": channel, "name": "training"},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": f"{next(_seq)}.1.def",
        "response_url": response_url,
        "message_ts": msg["ts"],
        "message": {k: v for k, v in msg.items() if k not in ("channel", "channel_type", "event_ts")},
    }
    return urlencode({"payload": json.dumps(payload)})


def block_action(
    action_id: str, value: str, *, channel: str, message_ts: str, thread_ts: str | None, user: str = "U0ALICE"
) -> str:
    container = {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False}
    if thread_ts:
        container["thread_ts"] = thread_ts
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": APP,
        "token": "legacy-verification-token",
        "container": container,
        "trigger_id": f"{next(_seq)}.1.ghi",
        "team": {"id": TEAM, "domain": "fake"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "training"},
        "message": {
            "type": "message",
            "user": "UTRACEBOT",
            "ts": message_ts,
            "thread_ts": thread_ts,
            "text": "answer",
            "bot_id": "B0001",
        },
        "response_url": "https://hooks.slack.com/actions/T0001/1/ghi",
        "actions": [
            {
                "action_id": action_id,
                "block_id": "tracebot_feedback",
                "text": {"type": "plain_text", "text": action_id},
                "value": value,
                "type": "button",
                "action_ts": new_ts(),
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)})


def view_submission(view: dict[str, Any], values: dict[str, Any], *, user: str = "U0BOB") -> str:
    """A modal as Slack sends it back on submit: the opened view with the user's input in its state."""
    payload = {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "fake"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
        "api_app_id": APP,
        "token": "legacy-verification-token",
        "trigger_id": f"{next(_seq)}.1.jkl",
        "view": {**view, "id": "V0MODAL", "team_id": TEAM, "app_id": APP, "state": {"values": values}},
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }
    return urlencode({"payload": json.dumps(payload)})
