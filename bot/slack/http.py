"""HTTP mode: Bolt behind a threaded WSGI server (Bolt verifies every request's signature)."""

from __future__ import annotations

import logging
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # socketserver's default listen backlog is 5: a burst of Slack deliveries (retries, several
    # channels at once) would see connection resets. Slack sends bursts, so queue them.
    request_queue_size = 128


class QuietHandler(WSGIRequestHandler):
    """Access lines at debug level: request paths are harmless but Slack sends a lot of them."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s " + format, self.address_string(), *args)


def make_http_server(app: App, host: str = "0.0.0.0", port: int = 3000) -> ThreadingWSGIServer:  # noqa: S104
    server = make_server(
        host, port, SlackRequestHandler(app, path=EVENTS_PATH), ThreadingWSGIServer, QuietHandler
    )
    assert isinstance(server, ThreadingWSGIServer)
    return server
