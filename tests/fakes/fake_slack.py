"""A small fake of Slack's Web API on loopback that records every call.

Slack's own servers can't run here, so this is the one mock the Slack tests use. It answers the
methods tracebot calls with the shapes Slack documents (``ok``, ``ts``, ``permalink`` ...), checks the
bearer token, serves files at ``url_private_download`` URLs (bearer token required, as Slack does),
implements the three steps of ``files_upload_v2`` (``files.getUploadURLExternal``, the POST to the
returned ``upload_url``, ``files.completeUploadExternal``), and can answer ``429`` with ``Retry-After``.

What the bot posts stays in its thread, as in Slack: ``conversations.replies`` returns it (its message
``metadata`` only with ``include_all_metadata``, as Slack documents), and ``chat.update`` changes it. A
failure can be made to come after the call took effect (``fail_next(..., landed=True)``: Slack posted the
message, then its answer was lost in a 500), or to last until the test lifts it (``fail_until_lifted``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

JSON_FIELDS = {"blocks", "view", "files", "attachments"}


class Hold:
    """Calls to one API method wait here, unanswered and unrecorded, until the test lets them go: an
    answer that blocks on something the test controls (never a sleep)."""

    def __init__(self, first: int | None = None) -> None:
        self.arrived = 0  # calls that reached the hold, ever
        self.first = first  # hold only this many calls; later ones are answered at once
        self.active = True
        self._waiting: list[tuple[threading.Event, list[bool]]] = []
        self._cond = threading.Condition()

    def wait(self) -> bool:
        """Block the call; True when it may go on, False when it was dropped."""
        with self._cond:
            if not self.active or (self.first is not None and self.arrived >= self.first):
                return True
            gate, dropped = threading.Event(), [False]
            self._waiting.append((gate, dropped))
            self.arrived += 1
            self._cond.notify_all()
        gate.wait(timeout=120)
        return not dropped[0]

    def wait_arrived(self, n: int, timeout: float = 30.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self.arrived >= n, timeout=timeout):
                raise AssertionError(f"{self.arrived} held calls arrived, not {n}")

    def drop(self) -> None:
        """The calls waiting now are never answered nor recorded (their process was killed); later ones
        are held too."""
        with self._cond:
            for gate, dropped in self._waiting:
                dropped[0] = True
                gate.set()
            self._waiting.clear()

    def release(self) -> None:
        """No more holding: the waiting calls go on."""
        with self._cond:
            self.active = False
            for gate, _dropped in self._waiting:
                gate.set()
            self._waiting.clear()


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    body: bytes
    authorization: str
    at: float = field(default_factory=time.monotonic)
    response: dict[str, Any] = field(default_factory=dict)  # what the fake answered (``ts`` of a post)


class FakeSlack:
    def __init__(
        self,
        bot_token: str = "xoxb-fake-bot-token",
        app_token: str = "xapp-fake-app-token",
        bot_user_id: str = "UTRACEBOT",
    ) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.bot_user_id = bot_user_id
        self.calls: list[Call] = []
        self.files: dict[str, bytes] = {}  # path under /files-pri/ -> content
        self.file_objects: dict[str, dict[str, Any]] = {}  # files.info: file id -> Slack's file object
        self.redirects: dict[str, str] = {}  # path under /files-pri/ -> where it redirects (302)
        self.uploads: dict[str, dict[str, Any]] = {}  # file_id -> {"filename", "content", "completed"...}
        self.socket_url = ""
        self.not_in: set[str] = set()  # channels tracebot was never invited to
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (channel, root ts) -> messages
        self.channel_members: dict[str, list[str]] = {}  # conversations.members; unlisted: nobody but tracebot
        # Slack serves its sign-in page, with 200, at a file URL when the token lacks the files:read scope
        self.files_scope = True
        # (channel, thread root ts) -> what the bot posted in that thread, as Slack keeps it
        self.posted: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._failures: dict[str, list[tuple[int, int, str, bool]]] = {}
        self._outage: dict[str, int] = {}  # method -> the status every call gets until lifted
        self._outage_after: dict[str, int] = {}  # method -> calls still answered before the outage starts
        self.holds: dict[str, Hold] = {}
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.base}/api/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stop_holding()
        self._server.shutdown()
        self._server.server_close()

    # -- test controls ---------------------------------------------------------------------------------
    def add_file(self, name: str, content: bytes) -> str:
        """Serve ``content``; return its ``url_private_download``."""
        path = f"T0001-F{len(self.files) + 1:04d}/download/{name}"
        self.files[path] = content
        return f"{self.base}/files-pri/{path}"

    def add_redirect(self, name: str, location: str) -> str:
        """A file URL that answers 302 to ``location``; return the URL."""
        path = f"T0001-R{len(self.redirects) + 1:04d}/download/{name}"
        self.redirects[path] = location
        return f"{self.base}/files-pri/{path}"

    def add_thread(self, channel: str, messages: list[dict[str, Any]]) -> None:
        """A thread ``conversations.replies`` returns: the root message first, then its replies."""
        root = messages[0]["ts"]
        self.threads[(channel, root)] = [{"type": "message", "thread_ts": root, **m} for m in messages]

    def everything_sent(self) -> str:
        """Every request body and param, and the content and name of every uploaded file."""
        with self._lock:
            uploads = [
                f"{u.get('filename')}\n{u.get('title')}\n{(u.get('content') or b'').decode('utf-8', 'replace')}"
                for u in self.uploads.values()
            ]
        return "\n".join([self.all_recorded_text(), *uploads])

    def fail_next(
        self, method: str, status: int = 429, retry_after: int = 1, error: str = "ratelimited", *, landed: bool = False
    ) -> None:
        """The next call to ``method`` fails with ``status`` (``200``: Slack's own refusal, ``ok: false``
        with ``error``). ``landed``: the call took effect first (the message is in the channel), and only
        its answer is the failure."""
        self._failures.setdefault(method, []).append((status, retry_after, error, landed))

    def fail_until_lifted(self, method: str, status: int = 503, *, after: int = 0) -> None:
        """Every call to ``method`` fails with ``status`` (Slack down) until :meth:`lift`; ``after``: once
        that many more calls have gone through (Slack goes down in the middle of what is being posted)."""
        with self._lock:
            self._outage[method] = status
            self._outage_after[method] = after

    def lift(self, method: str) -> None:
        with self._lock:
            self._outage.pop(method, None)

    def thread_replies(self, channel: str, root: str) -> list[dict[str, Any]]:
        """What the bot posted in a thread and is there now (edited messages as edited)."""
        with self._lock:
            return list(self.posted.get((channel, root), []))

    def hold(self, method: str, first: int | None = None) -> Hold:
        """Make calls to ``method`` (the ``first`` ones only, when given) wait until the returned
        :class:`Hold` lets them go or drops them."""
        self.holds[method] = Hold(first)
        return self.holds[method]

    def stop_holding(self) -> None:
        for hold in self.holds.values():
            hold.release()

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def posts(self, channel: str | None = None) -> list[dict[str, Any]]:
        return [
            c.params for c in self.calls_to("chat.postMessage") if channel in (None, c.params.get("channel"))
        ]

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Poll ``predicate`` until it returns something truthy; fail with the calls seen so far."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"timed out after {timeout}s; calls: {[c.method for c in self.calls]}")

    def all_recorded_text(self) -> str:
        """Every request body and every param, as one string (to assert secrets never leak)."""
        with self._lock:
            return "\n".join(c.body.decode("utf-8", "replace") + json.dumps(c.params) for c in self.calls)

    # -- the API ---------------------------------------------------------------------------------------
    def _next_ts(self) -> str:
        n = next(self._ts)
        return f"{1763780000 + n}.{n:06d}"

    def _answer(self, method: str, p: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": "Fake",
                "user": "tracebot",
                "team_id": "T0001",
                "user_id": self.bot_user_id,
                "bot_id": "B0001",
            }
        if method == "apps.connections.open":
            return {"ok": True, "url": self.socket_url}
        if method == "chat.postMessage":
            if p.get("channel") in self.not_in:
                return {"ok": False, "error": "not_in_channel"}
            ts = self._next_ts()
            message = {
                "type": "message",
                "text": p.get("text", ""),
                "user": self.bot_user_id,
                "bot_id": "B0001",
                "ts": ts,
                "thread_ts": p.get("thread_ts"),
            }
            if p.get("blocks"):
                message["blocks"] = p["blocks"]
            metadata = p.get("metadata")
            if isinstance(metadata, str):
                metadata = json.loads(metadata)
            if metadata:
                message["metadata"] = metadata
            self.posted.setdefault((str(p.get("channel")), str(p.get("thread_ts") or ts)), []).append(message)
            return {"ok": True, "channel": p.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            for messages in self.posted.values():
                for m in messages:
                    if m["ts"] == p.get("ts"):
                        m.update({"text": p.get("text", ""), "blocks": p.get("blocks") or [], "edited": {"ts": self._next_ts()}})
            return {"ok": True, "channel": p.get("channel"), "ts": p.get("ts"), "text": p.get("text", "")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self._next_ts()}
        if method == "chat.getPermalink":
            ts = str(p.get("message_ts", "")).replace(".", "")
            return {
                "ok": True,
                "channel": p.get("channel"),
                "permalink": f"https://fake.slack.com/archives/{p.get('channel')}/p{ts}",
            }
        if method == "conversations.replies":
            if p.get("channel") in self.not_in:
                return {"ok": False, "error": "not_in_channel"}
            where = (str(p.get("channel")), str(p.get("ts")))
            posted = self.posted.get(where, [])
            messages = self.threads.get(where)
            if messages is None and posted:  # a user's message the bot answered: Slack has it as the root
                messages = [{"type": "message", "ts": where[1], "thread_ts": where[1]}]
            if messages is None:
                return {"ok": False, "error": "thread_not_found"}
            root_too = [m for m in posted if m["ts"] == where[1]]  # the bot's own top-level post
            replies = [m for m in posted if m["ts"] != where[1]]
            every = [*root_too, *messages, *replies] if not root_too else [*root_too, *replies]
            if str(p.get("include_all_metadata")).lower() not in ("true", "1"):
                every = [{k: v for k, v in m.items() if k != "metadata"} for m in every]
            # Paged as Slack pages it: ``limit`` messages (Slack's default and most: 1,000), then a cursor
            start = int(str(p.get("cursor") or "c0").removeprefix("c"))
            end = start + min(int(p.get("limit") or 1000), 1000)
            more = end < len(every)
            return {"ok": True, "messages": every[start:end], "has_more": more,
                    "response_metadata": {"next_cursor": f"c{end}" if more else ""}}
        if method == "views.open":
            if not p.get("trigger_id"):
                return {"ok": False, "error": "invalid_trigger_id"}
            view = p.get("view") or {}
            return {"ok": True, "view": {"id": "V0MODAL", **(json.loads(view) if isinstance(view, str) else view)}}
        if method == "files.info":
            found = self.file_objects.get(str(p.get("file")))
            return {"ok": True, "file": found} if found else {"ok": False, "error": "file_not_found"}
        if method == "conversations.open":
            user = str(p.get("users", ""))
            return {"ok": True, "channel": {"id": "D" + user.removeprefix("U")}}
        if method == "conversations.members":
            if p.get("channel") in self.not_in:
                return {"ok": False, "error": "channel_not_found"}
            members = [self.bot_user_id, *self.channel_members.get(str(p.get("channel")), [])]
            return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        if method == "views.publish":
            return {"ok": True, "view": {"id": "V0001", **(p.get("view") or {})}}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._file_ids):06d}"
            self.uploads[file_id] = {
                "filename": p.get("filename"),
                "length": int(p.get("length", 0)),
                "content": None,
            }
            return {"ok": True, "upload_url": f"{self.base}/upload/{file_id}", "file_id": file_id}
        if method == "files.completeUploadExternal":
            files = p.get("files") or []
            for f in files:
                up = self.uploads.get(f.get("id"), {})
                up.update(
                    {
                        "completed": True,
                        "title": f.get("title"),
                        "channel": p.get("channel_id"),
                        "thread_ts": p.get("thread_ts"),
                    }
                )
            return {"ok": True, "files": [{"id": f.get("id"), "title": f.get("title")} for f in files]}
        return {"ok": False, "error": "unknown_method"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(
                self,
                status: int,
                body: bytes,
                ctype: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                path = url.path
                if path.startswith("/api/"):  # the read methods slack_sdk sends as GET (files.info)
                    self._api(path[len("/api/") :], b"", {k: v[0] for k, v in parse_qs(url.query).items()})
                    return
                if path.startswith("/files-pri/"):
                    key = path[len("/files-pri/") :]
                    if key in fake.redirects:
                        self._send(302, b"", "text/plain", headers={"Location": fake.redirects[key]})
                        return
                    if self.headers.get("Authorization") != f"Bearer {fake.bot_token}" or not fake.files_scope:
                        # Slack answers an unauthenticated file URL with its login page, not the file.
                        self._send(200, b"<html>sign in</html>", "text/html")
                        return
                    content = fake.files.get(key)
                    self._send(
                        200 if content is not None else 404, content or b"", "application/octet-stream"
                    )
                    return
                self._send(404, b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                path = urlparse(self.path).path
                if path.startswith("/upload/"):
                    file_id = path.rsplit("/", 1)[-1]
                    with fake._lock:
                        if file_id in fake.uploads:
                            fake.uploads[file_id]["content"] = raw
                        fake.calls.append(Call("upload", {"file_id": file_id}, b"", ""))
                    self._send(200, f"OK - {len(raw)}".encode(), "text/plain")
                    return
                if path.startswith("/response/"):  # an interaction's response_url
                    with fake._lock:
                        fake.calls.append(Call("response_url", json.loads(raw or b"{}"), raw, ""))
                    self._send(200, b"ok", "text/plain")
                    return
                if not path.startswith("/api/"):
                    self._send(404, b"{}")
                    return
                self._api(path[len("/api/") :], raw, _parse(raw, self.headers.get("Content-Type", "")))

            def _api(self, method: str, raw: bytes, params: dict[str, Any]) -> None:
                hold = fake.holds.get(method)
                if hold is not None and not hold.wait():
                    self.close_connection = True  # dropped: its caller is gone; Slack never saw it
                    return
                auth = self.headers.get("Authorization", "")
                call = Call(method, params, raw, auth)
                with fake._lock:
                    fake.calls.append(call)
                    failures = fake._failures.get(method)
                    failure = failures.pop(0) if failures else None
                    if failure is None and method in fake._outage:
                        if fake._outage_after.get(method, 0) > 0:
                            fake._outage_after[method] -= 1
                        else:
                            failure = (fake._outage[method], 1, "service_unavailable", False)
                    if failure is not None and failure[3]:  # it took effect; only the answer is lost
                        call.response = fake._answer(method, params)
                if failure is not None:
                    status, retry_after, error, _landed = failure
                    self._send(
                        status,
                        json.dumps({"ok": False, "error": error}).encode(),
                        headers={"Retry-After": str(retry_after)},
                    )
                    return
                expected = fake.app_token if method == "apps.connections.open" else fake.bot_token
                if auth != f"Bearer {expected}":
                    self._send(200, json.dumps({"ok": False, "error": "invalid_auth"}).encode())
                    return
                with fake._lock:
                    answer = fake._answer(method, params)
                    call.response = answer
                self._send(200, json.dumps(answer).encode())

        return Handler


def _parse(raw: bytes, content_type: str) -> dict[str, Any]:
    if "json" in content_type:
        data = json.loads(raw or b"{}")
    else:
        data = {k: v[0] for k, v in parse_qs(raw.decode("utf-8")).items()}
    for key in JSON_FIELDS & data.keys():
        if isinstance(data[key], str):
            with contextlib.suppress(ValueError):
                data[key] = json.loads(data[key])
    return data
