"""``tracebot serve`` and ``tracebot run`` as deployed: real processes, configured only by environment."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.fake_socket_mode import FakeSocketMode
from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import SIGNING_SECRET, send_signed
from tests.slack.tiny_kb import OOM_LINE

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def start(tmp_path, fake_slack, kb_dir):
    procs: list[subprocess.Popen] = []

    def run(*args: str, **env: str) -> subprocess.Popen:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TRACEBOT_"))}
        base.update(
            SLACK_BOT_TOKEN=fake_slack.bot_token,
            SLACK_API_URL=fake_slack.api_url,
            TRACEBOT_KNOWLEDGE=str(kb_dir),
            TRACEBOT_DB=str(tmp_path / "tracebot.sqlite3"),
            TRACEBOT_LOAD_ENTRYPOINTS="0",
            **env,
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "tracebot.cli", *args],
            cwd=REPO,
            env=base,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        assert fake_token_absent(out)


def fake_token_absent(log: str) -> bool:
    return "xoxb-fake-bot-token" not in log and "xapp-fake-app-token" not in log and SIGNING_SECRET not in log


def _wait_listening(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else "exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("tracebot serve did not start listening")


def test_tracebot_serve_answers_signed_events_and_refuses_unsigned_ones(start, fake_slack):
    port = _free_port()
    proc = start("serve", "--host", "127.0.0.1", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET)
    _wait_listening(port, proc)
    url = f"http://127.0.0.1:{port}/slack/events"
    msg = payloads.message(OOM_LINE)
    body = json.dumps(payloads.event_callback(msg))
    assert send_signed(url, body, "application/json", headers={"X-Slack-Signature": "v0=bad"}).status == 401
    assert send_signed(url, body, "application/json").status == 200
    post = fake_slack.wait_for(lambda: fake_slack.posts(), timeout=20)[0]
    assert post["thread_ts"] == msg["ts"] and "Test: CUDA out of memory" in texts(post["blocks"])


def test_tracebot_run_with_an_app_token_uses_socket_mode(start, fake_slack):
    server = FakeSocketMode().start()
    fake_slack.socket_url = server.url
    try:
        start("run", SLACK_APP_TOKEN=fake_slack.app_token)
        server.wait_connected(1, timeout=20)
        msg = payloads.message(OOM_LINE)
        envelope = server.send("events_api", payloads.event_callback(msg))
        assert server.wait_ack(envelope)["envelope_id"] == envelope
        post = fake_slack.wait_for(lambda: fake_slack.posts(), timeout=20)[0]
        assert post["thread_ts"] == msg["ts"]
    finally:
        server.stop()


def test_stopping_tracebot_serve_with_answers_still_queued_posts_them_before_it_exits(start, fake_slack):
    # One answer every two seconds in this channel: the last two pastes are still queued when it is stopped.
    port = _free_port()
    proc = start(
        "serve", "--host", "127.0.0.1", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET,
        TRACEBOT_CHANNEL_RATE="0.5", TRACEBOT_CHANNEL_BURST="1",
    )
    _wait_listening(port, proc)
    url = f"http://127.0.0.1:{port}/slack/events"
    pastes = [payloads.message(OOM_LINE) for _ in range(3)]
    for msg in pastes:
        assert send_signed(url, json.dumps(payloads.event_callback(msg)), "application/json").status == 200
    fake_slack.wait_for(lambda: fake_slack.posts(), timeout=20)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    answered = sorted(p["thread_ts"] for p in fake_slack.posts())
    assert answered == sorted(m["ts"] for m in pastes), out


def test_stopping_tracebot_run_in_socket_mode_with_answers_still_queued_posts_them_before_it_exits(start, fake_slack):
    server = FakeSocketMode().start()
    fake_slack.socket_url = server.url
    try:
        proc = start("run", SLACK_APP_TOKEN=fake_slack.app_token, TRACEBOT_CHANNEL_RATE="0.5", TRACEBOT_CHANNEL_BURST="1")
        server.wait_connected(1, timeout=20)
        pastes = [payloads.message(OOM_LINE) for _ in range(3)]
        for msg in pastes:
            server.wait_ack(server.send("events_api", payloads.event_callback(msg)))
        fake_slack.wait_for(lambda: fake_slack.posts(), timeout=20)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert sorted(p["thread_ts"] for p in fake_slack.posts()) == sorted(m["ts"] for m in pastes), out
    finally:
        server.stop()
