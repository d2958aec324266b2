"""Socket Mode against a fake Socket Mode websocket server: acks, replies, and once-only handling when
Slack redelivers an envelope or two app processes each hold a connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from urllib.parse import parse_qsl

import pytest

from tests.fakes.fake_socket_mode import FakeSocketMode
from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import make_config
from tests.slack.tiny_kb import OOM_LINE
from tracebot.service.jobs import JobPool
from tracebot.slack.app import build_app
from tracebot.slack.socket_mode import socket_mode_handler


@pytest.fixture
def socket_server(fake_slack) -> Iterator[FakeSocketMode]:
    server = FakeSocketMode().start()
    fake_slack.socket_url = server.url
    yield server
    server.stop()


def _connect(tmp_path, fake_slack, kb_dir, host, n: int):
    """``n`` app processes (each its own Bolt app, store connection and socket) sharing one database."""
    config = make_config(tmp_path, fake_slack, kb_dir, slack_app_token=fake_slack.app_token)
    config.slack_signing_secret = None  # Socket Mode deployments have no signing secret
    running = []
    for _ in range(n):
        app, tracebot = build_app(config, host=host, jobs=JobPool(workers=2))
        handler = socket_mode_handler(app, config)
        handler.connect()
        running.append((handler, tracebot))
    return running


def _close(running) -> None:
    for handler, tracebot in running:
        # The SDK's close joins its interval threads (about 3 s); nothing is left to check, so the test
        # doesn't wait for it.
        threading.Thread(target=handler.close, daemon=True).start()
        tracebot.shutdown()


def test_an_event_over_socket_mode_is_acked_and_answered_in_its_thread(
    tmp_path, fake_slack, kb_dir, plugin_host, socket_server
):
    running = _connect(tmp_path, fake_slack, kb_dir, plugin_host[0], 1)
    try:
        socket_server.wait_connected(1)
        msg = payloads.message(OOM_LINE)
        envelope = socket_server.send("events_api", payloads.event_callback(msg))
        assert socket_server.wait_ack(envelope) == {"envelope_id": envelope}
        post = fake_slack.wait_for(lambda: fake_slack.posts())[0]
        assert post["thread_ts"] == msg["ts"] and "Test: CUDA out of memory" in texts(post["blocks"])
        assert (
            fake_slack.calls_to("apps.connections.open")[0].authorization == f"Bearer {fake_slack.app_token}"
        )
    finally:
        _close(running)


def test_a_slash_command_over_socket_mode_is_answered_in_the_ack(
    tmp_path, fake_slack, kb_dir, plugin_host, socket_server
):
    running = _connect(tmp_path, fake_slack, kb_dir, plugin_host[0], 1)
    try:
        socket_server.wait_connected(1)
        # Over Socket Mode a slash command's payload is its form fields as a JSON object.
        form = dict(parse_qsl(payloads.slash("help")))
        envelope = socket_server.send("slash_commands", form)
        ack = socket_server.wait_ack(envelope)
        assert "/trace diagnose" in texts(ack["payload"]["blocks"])
    finally:
        _close(running)


def test_redelivered_envelopes_and_two_connections_answer_each_message_once(
    tmp_path, fake_slack, kb_dir, plugin_host, socket_server
):
    running = _connect(tmp_path, fake_slack, kb_dir, plugin_host[0], 2)
    try:
        socket_server.wait_connected(2)
        messages = [payloads.message(OOM_LINE, channel=f"C0SOCK{i}") for i in range(5)]
        for msg in messages:
            body = payloads.event_callback(msg)
            socket_server.send("events_api", body, connection=0)
            socket_server.send("events_api", body, connection=1)  # the other process's connection
            socket_server.send("events_api", body, connection=0, retry_attempt=1)  # Slack's retry
        fake_slack.wait_for(lambda: len(fake_slack.posts()) >= 5)
        for _, tracebot in running:
            assert tracebot.wait_idle(10)
        assert sorted(p["channel"] for p in fake_slack.posts()) == [f"C0SOCK{i}" for i in range(5)]
    finally:
        _close(running)
