"""HTTP mode: Bolt's WSGI adapter served by waitress, behind a gate that checks what Slack would send.

waitress reads each request whole (headers and body, up to the body cap) in its event loop before a
worker thread sees it, so a connection that never finishes its headers holds no thread; idle connections
are closed after ``idle_timeout_s``, a request that has not arrived completely after ``request_timeout_s``
is dropped, and at most ``connection_limit`` connections are open at once.

:class:`SlackGate` runs first on every request: it refuses a body larger than ``max_body_bytes`` from its
Content-Length (413, unread), a malformed timestamp (400) and a bad signature (401) before anything is
parsed, then a signed body that is not the JSON or form Slack sends (400). Each refusal is one log line.
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, cast
from urllib.parse import parse_qs

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk.signature import SignatureVerifier
from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20  # Slack's event and interaction payloads are a few kB
REQUEST_TIMEOUT_S = 10  # headers and body must have arrived this long after the first byte
IDLE_TIMEOUT_S = 30  # a keep-alive connection with nothing to do is closed after this
CONNECTION_LIMIT = 100
THREADS = 8  # requests handled at once (Bolt acks quickly; slow work goes to tracebot's job pools)
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")

Environ = dict[str, Any]
StartResponse = Callable[..., Any]


def _reply(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


def _parses(body: bytes, content_type: str) -> bool:
    """True when ``body`` is what Slack sends: a JSON object, or a form whose ``payload`` is JSON."""
    try:
        if "json" in content_type:
            return isinstance(json.loads(body), dict)
        form = parse_qs(body.decode("utf-8"), strict_parsing=bool(body))
        if "payload" in form:
            return isinstance(json.loads(form["payload"][0]), dict)
        return True
    except (ValueError, UnicodeDecodeError):
        return False


class SlackGate:
    """WSGI middleware in front of Bolt: size, timestamp and signature first, parsing after."""

    def __init__(
        self, app: Callable[..., Iterable[bytes]] | None, signing_secret: str, max_body_bytes: int
    ) -> None:
        self.app = app  # None until mounted (:func:`mount_app`): the port is bound before the app is built
        self.verifier = SignatureVerifier(signing_secret)
        self.max_body_bytes = max_body_bytes

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != EVENTS_PATH:
            return _reply(start_response, "404 Not Found", "Not Found")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if length < 0:
            log.warning("refused a request: bad Content-Length")
            return _reply(start_response, "400 Bad Request", "bad Content-Length")
        if length > self.max_body_bytes:
            log.warning("refused a request of %d bytes (limit %d)", length, self.max_body_bytes)
            return _reply(start_response, "413 Payload Too Large", "request body too large")
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
        if not _TIMESTAMP.match(timestamp):
            log.warning("refused a request: missing or malformed X-Slack-Request-Timestamp")
            return _reply(start_response, "400 Bad Request", "bad X-Slack-Request-Timestamp")
        body = environ["wsgi.input"].read(length)
        if not self.verifier.is_valid(body, timestamp, environ.get("HTTP_X_SLACK_SIGNATURE", "")):
            log.warning("refused a request: invalid or expired signature")
            return _reply(start_response, "401 Unauthorized", "invalid signature")
        if not _parses(body, environ.get("CONTENT_TYPE", "")):
            log.warning("refused a signed request whose body is not the JSON or form Slack sends")
            return _reply(start_response, "400 Bad Request", "malformed body")
        environ["wsgi.input"] = io.BytesIO(body)
        # never None here: the server listens only once an app is mounted (HttpServer.listen)
        app = cast(Callable[..., Iterable[bytes]], self.app)
        return app(environ, start_response)


class _Channel(HTTPChannel):
    """Remembers when the request being received started, for :class:`_Server`'s request timeout."""

    request_started = 0.0

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.time()  # waitress keeps last_activity in time.time() too
        return bool(super().received(data))


class _Server(TcpWSGIServer):
    channel_class = _Channel
    request_timeout_s: float = REQUEST_TIMEOUT_S

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # closes connections idle for longer than channel_timeout
        cutoff = now - self.request_timeout_s
        for channel in list(self.active_channels.values()):
            if channel.request is not None and not channel.request.completed and channel.request_started < cutoff:
                channel.will_close = True  # headers (or body) still trickling in: a slowloris


class HttpServer:
    """waitress serving a WSGI app on one socket; ``serve_forever`` in a thread, ``shutdown`` from another."""

    def __init__(
        self,
        wsgi: Callable[..., Iterable[bytes]],
        host: str,
        port: int,
        *,
        threads: int = THREADS,
        connection_limit: int = CONNECTION_LIMIT,
        idle_timeout_s: int = IDLE_TIMEOUT_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.wsgi = wsgi
        self._map: dict[int, Any] = {}
        adj = Adjustments(
            host=host,
            port=port,
            threads=threads,
            connection_limit=connection_limit,
            channel_timeout=idle_timeout_s,
            cleanup_interval=1,  # how often the timeouts are checked
            max_request_body_size=max_body_bytes,
            max_request_header_size=64 << 10,
            ident="tracebot",
            clear_untrusted_proxy_headers=True,
        )
        self._closing = False
        # Bound here, listening only in :meth:`listen`: a bound socket that does not listen refuses a
        # connection at once, where a listening one would queue it unanswered until the loop runs.
        self._server = _Server(wsgi, map=self._map, adj=adj, _start=False)
        self._server.request_timeout_s = request_timeout_s

    def listen(self) -> None:
        """Start taking connections (``OSError`` if another process took the port between the bind and now).
        Refused before the gate has its app (:func:`mount_app`): a request would have nothing to answer it,
        and a refused connection is one Slack retries."""
        if isinstance(self.wsgi, SlackGate) and self.wsgi.app is None:
            raise RuntimeError("no app to serve yet: mount_app() before listening")
        if not self._server.accepting:
            self._server.accept_connections()

    @property
    def server_address(self) -> tuple[str, int]:
        return str(self._server.effective_host), int(self._server.effective_port)

    def serve_forever(self) -> None:
        self.listen()
        try:
            self._server.run()
        except OSError:
            # shutdown() closes the sockets from another thread; a poll already waiting on them then
            # fails with EBADF. That is the loop ending as asked, not an error.
            if not self._closing:
                raise

    def shutdown(self) -> None:
        self._closing = True
        self._server.task_dispatcher.shutdown()
        wasyncore.close_all(self._map)


def make_http_server(
    app: App | None,
    signing_secret: str,
    host: str = "0.0.0.0",  # noqa: S104
    port: int = 3000,
    max_body_bytes: int = MAX_BODY_BYTES,
    **limits: Any,
) -> HttpServer:
    """Bolt's WSGI adapter behind :class:`SlackGate`, served by waitress with the limits above. The port
    is bound here (``OSError`` when it cannot be); ``app`` may be ``None`` and given later with
    :func:`mount_app`, before :meth:`HttpServer.serve_forever`. The port listens from the moment there is
    an app: while ``tracebot serve`` loads its knowledge base a connection is refused at once (Slack
    retries), not held in the listen backlog with no answer."""
    gate = SlackGate(None, signing_secret, max_body_bytes)
    server = HttpServer(gate, host, port, max_body_bytes=max_body_bytes, **limits)
    if app is not None:
        mount_app(server, app)
    return server


def mount_app(server: HttpServer, app: App) -> None:
    """Give a server :func:`make_http_server` made without its app the Bolt app to serve."""
    assert isinstance(server.wsgi, SlackGate)
    server.wsgi.app = SlackRequestHandler(app, path=EVENTS_PATH)
    server.listen()
