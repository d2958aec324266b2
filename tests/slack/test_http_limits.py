"""HTTP mode under hostile clients: a body over the cap is refused from its Content-Length before it is
read, connections that never finish their headers neither block signed requests nor stay open, and
malformed timestamps or bodies get a 4xx and one log line instead of a 500 and a traceback."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator

import pytest

from tests.slack import payloads
from tests.slack.harness import Slack, make_config, running_app
from tests.slack.tiny_kb import OOM_LINE


@pytest.fixture
def strict(tmp_path, fake_slack, kb_dir, plugin_host) -> Iterator[Slack]:
    """The app with two request threads and one-second timeouts, so a test sees them act."""
    host, slow = plugin_host
    config = make_config(tmp_path, fake_slack, kb_dir)
    with running_app(config, fake_slack, host=host, slow=slow, threads=2, idle_timeout_s=1,
                     request_timeout_s=1) as app:
        yield app


def _problems(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Warnings and errors logged while the request was handled, except waitress's "Task queue depth"
    notice: it reports a busy machine (its request threads all taken), not this request, and on a loaded
    CI runner it made these tests count two lines."""
    return [r for r in caplog.records if r.levelno >= logging.WARNING and r.name != "waitress.queue"]


def _connect(url: str) -> socket.socket:
    port = int(url.split(":")[2].split("/")[0])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def _wait_closed(sock: socket.socket, feed: bytes = b"", timeout: float = 15.0) -> bool:
    """Poll until the server hangs up; ``feed`` is sent between polls (a client trickling its headers)."""
    sock.settimeout(0.2)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if feed:
                sock.sendall(feed)
            if _closed_by_server(sock):
                return True
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True
    return False


def test_a_body_over_the_cap_is_refused_from_its_content_length_without_being_read(slack):
    sock = _connect(slack.url)
    head = (
        "POST /slack/events HTTP/1.1\r\nHost: tracebot\r\nContent-Type: application/json\r\n"
        f"Content-Length: {50 << 20}\r\nX-Slack-Request-Timestamp: {int(time.time())}\r\n"
        "X-Slack-Signature: v0=00\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"type": "event_callback", "event": ')  # 50 MB announced, 40 bytes sent
    answer = sock.recv(4096).decode("latin-1")
    sock.close()
    assert answer.startswith("HTTP/1.1 413")
    slack.idle()
    assert slack.fake.posts() == []


def test_clients_that_never_finish_their_headers_neither_block_a_signed_request_nor_stay_open(strict):
    stalled = []
    for _ in range(6):  # three times the request threads
        sock = _connect(strict.url)
        sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: tracebot\r\nX-Slack-Sign")
        stalled.append(sock)

    assert strict.event(payloads.message(OOM_LINE)).status == 200
    assert strict.fake.wait_for(lambda: strict.fake.posts("C0TRAIN"))

    assert all(_wait_closed(s) for s in stalled), "an idle half-sent request stayed open"
    trickler = _connect(strict.url)
    trickler.sendall(b"POST /slack/events HTTP/1.1\r\nHost: tracebot\r\n")
    assert _wait_closed(trickler, feed=b"X-Slow: 1\r\n"), "a request trickling its headers stayed open"
    for sock in [*stalled, trickler]:
        sock.close()


@pytest.mark.parametrize("timestamp", ["yesterday", "", "1e9", "-5", "9" * 40])
def test_a_malformed_timestamp_is_a_400_with_one_log_line(slack, caplog, timestamp):
    body = json.dumps(payloads.event_callback(payloads.message(OOM_LINE)))
    caplog.set_level(logging.INFO)
    resp = slack.send(body, "application/json", headers={"X-Slack-Request-Timestamp": timestamp})
    assert resp.status == 400
    problems = _problems(caplog)
    assert len(problems) == 1 and problems[0].exc_info is None
    assert "X-Slack-Request-Timestamp" in problems[0].getMessage()


@pytest.mark.parametrize(
    "body, content_type",
    [
        ('{"type": "event_callback", "event": ', "application/json"),
        ("[1, 2, 3]", "application/json"),
        ('payload={"type": "block_actions"', "application/x-www-form-urlencoded"),
        ("\udcff".encode("utf-8", "surrogatepass").decode("latin-1"), "application/x-www-form-urlencoded"),
    ],
)
def test_a_signed_but_malformed_body_is_a_400_with_one_log_line(slack, caplog, body, content_type):
    caplog.set_level(logging.INFO)
    resp = slack.send(body, content_type)
    assert resp.status == 400
    problems = _problems(caplog)
    assert len(problems) == 1 and problems[0].exc_info is None
    slack.idle()
    assert slack.fake.posts() == []


def test_the_port_refuses_connections_while_the_app_is_built_rather_than_holding_them_unanswered():
    """``tracebot serve`` binds its port first (a taken port is said at once), then loads the knowledge
    base. The socket listened from the bind: Slack's requests sat in the backlog, unanswered, for the whole
    load, and its retries stacked up behind them. It listens once there is an app to answer: until then a
    connection is refused at once (Slack retries later), after it the request is answered."""
    import errno
    import http.client
    import threading

    from slack_bolt import App

    from tests.slack.harness import SIGNING_SECRET
    from tracebot.slack.http import make_http_server, mount_app

    server = make_http_server(None, SIGNING_SECRET, "127.0.0.1", 0)
    port = server.server_address[1]
    try:
        with socket.socket() as early:
            early.settimeout(10)
            assert early.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED
        # serving with no app mounted is refused, and the port still refuses connections: no request is
        # ever let in with nothing to answer it (the gate had a 503 "starting" for that; now unreachable)
        with pytest.raises(RuntimeError, match="no app to serve yet"):
            server.serve_forever()
        with socket.socket() as still_early:
            still_early.settimeout(10)
            assert still_early.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED
        mount_app(server, App(token="xoxb-test", signing_secret=SIGNING_SECRET, token_verification_enabled=False))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().status == 404  # answered by the gate, not left waiting
        conn.close()
    finally:
        server.shutdown()
