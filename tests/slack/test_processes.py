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
        )
        base.update(env)  # a test's own value wins (a wrong token)
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


# -- kill -9 with answers queued: the durable inbox ------------------------------------------------------


def _serve(start, **env: str) -> str:
    """``tracebot serve`` on a free port, on the test's one database; its events URL."""
    port = _free_port()
    proc = start("serve", "--host", "127.0.0.1", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET, **env)
    _wait_listening(port, proc)
    _serve.proc = proc  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{port}/slack/events"


def _kill(proc: subprocess.Popen) -> None:
    proc.kill()  # SIGKILL: no drain, no cleanup, as the OOM killer or a crash does
    proc.wait(timeout=20)


def _accepted(url: str, bodies: list[str]) -> None:
    for body in bodies:
        assert send_signed(url, body, "application/json").status == 200  # Slack has its ack: it will not resend


def _answers_in(fake, channel: str, ts: str) -> list[dict]:
    return [p for p in fake.posts(channel) if p.get("thread_ts") == ts and "Test: CUDA out of memory" in texts(p["blocks"])]


def _sentinel(fake, url: str, channel: str = "C0TRAIN") -> None:
    """A new paste in ``channel``, answered: every answer queued before it in that channel is done."""
    msg = payloads.message(OOM_LINE, channel=channel)
    _accepted(url, [json.dumps(payloads.event_callback(msg))])
    fake.wait_for(lambda: _answers_in(fake, channel, msg["ts"]), timeout=30)


def test_a_killed_tracebot_answers_every_accepted_message_once_after_its_restart(start, fake_slack):
    held = fake_slack.hold("chat.postMessage")
    url = _serve(start)
    pastes = [payloads.message(f"[rank{i}]: {OOM_LINE}") for i in range(3)]
    mention = payloads.mention(OOM_LINE)
    bodies = [json.dumps(payloads.event_callback(e)) for e in [*pastes, mention]]
    _accepted(url, bodies)
    assert send_signed(url, payloads.slash(f"diagnose {OOM_LINE}", channel="C0OPS"),
                       "application/x-www-form-urlencoded").status == 200
    # The first paste's answer and the /trace run's parent message are at Slack, unanswered; the rest queue.
    held.wait_arrived(2)
    _kill(_serve.proc)  # type: ignore[attr-defined]
    held.drop()  # Slack never got them
    fake_slack.stop_holding()
    assert fake_slack.posts() == []

    url = _serve(start)
    # Slack redelivers the first paste (its ack was lost, say) while the restart answers it: one answer
    assert send_signed(url, bodies[0], "application/json", headers={"X-Slack-Retry-Num": "1",
                                                                     "X-Slack-Retry-Reason": "http_timeout"}).status == 200
    _sentinel(fake_slack, url)
    for event in [*pastes, mention]:
        assert len(_answers_in(fake_slack, "C0TRAIN", event["ts"])) == 1, event["text"]
    parents = fake_slack.wait_for(lambda: [c.response["ts"] for c in fake_slack.calls_to("chat.postMessage")
                                           if c.params.get("channel") == "C0OPS" and "/trace diagnose" in c.params["text"]])
    assert len(parents) == 1
    fake_slack.wait_for(lambda: _answers_in(fake_slack, "C0OPS", parents[0]), timeout=30)
    _sentinel(fake_slack, url, "C0OPS")  # the diagnose's answer was queued in C0OPS's lane before it
    assert len(_answers_in(fake_slack, "C0OPS", parents[0])) == 1

def test_killed_twice_before_answering_a_restart_still_answers_each_message_once(start, fake_slack):
    held = fake_slack.hold("chat.postMessage")
    url = _serve(start)
    pastes = [payloads.message(f"[rank{i}]: {OOM_LINE}") for i in range(2)]
    _accepted(url, [json.dumps(payloads.event_callback(m)) for m in pastes])
    held.wait_arrived(1)
    _kill(_serve.proc)  # type: ignore[attr-defined]
    held.drop()
    _serve(start)  # the restart takes the work over, and is killed while answering it too
    held.wait_arrived(2)
    _kill(_serve.proc)  # type: ignore[attr-defined]
    held.drop()
    fake_slack.stop_holding()
    assert fake_slack.posts() == []

    url = _serve(start)
    _sentinel(fake_slack, url)
    assert [len(_answers_in(fake_slack, "C0TRAIN", m["ts"])) for m in pastes] == [1, 1]


def test_work_older_than_the_replay_age_is_dropped_with_a_note_to_whoever_asked(start, fake_slack):
    held = fake_slack.hold("chat.postMessage")
    url = _serve(start)
    paste, mention = payloads.message(OOM_LINE), payloads.mention(OOM_LINE)
    _accepted(url, [json.dumps(payloads.event_callback(e)) for e in (paste, mention)])
    held.wait_arrived(1)
    _kill(_serve.proc)  # type: ignore[attr-defined]
    held.drop()
    fake_slack.stop_holding()

    url = _serve(start, TRACEBOT_REPLAY_MAX_AGE_S="0.001")  # everything left is older than that by now
    _sentinel(fake_slack, url)
    mention_thread = [p["text"] for p in fake_slack.posts("C0TRAIN") if p.get("thread_ts") == mention["ts"]]
    assert len(mention_thread) == 1 and "restarted and dropped your message" in mention_thread[0]
    assert "Post it again" in mention_thread[0]
    # a paste nobody addressed to tracebot is not answered an hour late, nor apologised for: only logged
    assert [p for p in fake_slack.posts("C0TRAIN") if p.get("thread_ts") == paste["ts"]] == []


def test_answers_a_stop_could_not_post_within_its_drain_are_posted_after_the_restart(start, fake_slack):
    held = fake_slack.hold("chat.postMessage")
    url = _serve(start, TRACEBOT_DRAIN_S="0.5")
    pastes = [payloads.message(f"[rank{i}]: {OOM_LINE}") for i in range(2)]
    _accepted(url, [json.dumps(payloads.event_callback(m)) for m in pastes])
    held.wait_arrived(1)
    proc = _serve.proc  # type: ignore[attr-defined]
    proc.send_signal(signal.SIGTERM)  # a clean stop, but Slack is slower than the drain allows
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "stopping with 2 answers" in out, out
    held.drop()
    fake_slack.stop_holding()
    assert fake_slack.posts() == []

    url = _serve(start)
    _sentinel(fake_slack, url)
    assert [len(_answers_in(fake_slack, "C0TRAIN", m["ts"])) for m in pastes] == [1, 1]


def test_tracebot_serve_on_a_port_already_taken_or_a_host_it_cannot_resolve_says_so_in_one_line(start):
    """It ended in an OSError (EADDRINUSE) traceback that named no port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("serve", "--host", "127.0.0.1", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert f"error: cannot listen on 127.0.0.1:{port}: address already in use" in out, out
    assert "Traceback" not in out, out
    proc = start("serve", "--host", "nosuch.invalid", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1 and f"error: cannot listen on nosuch.invalid:{port}: " in out, out
    assert "Traceback" not in out, out


def test_tracebot_run_on_a_port_already_taken_names_port_not_a_flag_run_does_not_have(start):
    """The hint said "give --port or $PORT another port" under `tracebot run` too, which refuses --port."""
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("run", SLACK_SIGNING_SECRET=SIGNING_SECRET, PORT=str(port))
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert f"error: cannot listen on 0.0.0.0:{port}: address already in use" in out, out
    assert "set $PORT to another port" in out and "--port" not in out, out


def test_tracebot_serve_s_log_starts_without_bolt_s_false_warning_about_the_token(start):
    """Every start logged "As you gave `client` as well, `token` will be unused": Bolt read
    SLACK_BOT_TOKEN itself, and the client tracebot gave it carries that very token."""
    port = _free_port()
    proc = start("serve", "--host", "127.0.0.1", "--port", str(port), SLACK_SIGNING_SECRET=SIGNING_SECRET)
    assert proc.stdout is not None
    first: list[str] = []  # the log up to the line that says it serves
    for line in iter(proc.stdout.readline, ""):
        first.append(line)
        if "tracebot listening on" in line:
            break
    assert f"tracebot listening on http://127.0.0.1:{port}/slack/events" in first[-1], first
    assert not any("will be unused" in line or "WARNING" in line for line in first), first


def test_tracebot_run_with_a_wrong_app_token_says_so_in_one_line_and_exits_1(start, fake_slack):
    """A wrong or revoked SLACK_APP_TOKEN ended in a SlackApiError traceback from the Socket Mode client."""
    proc = start("run", SLACK_APP_TOKEN="xapp-not-this-app-s-token")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert (
        "error: cannot connect in Socket Mode: Slack answered apps.connections.open with invalid_auth: "
        "SLACK_APP_TOKEN must be the app-level token"
    ) in out, out
    assert "Traceback" not in out, out


def test_tracebot_serve_with_a_wrong_bot_token_says_so_in_one_line_and_exits_1(start):
    """Bolt's App checks the token itself (auth.test) and raised a BoltError traceback."""
    proc = start("serve", "--port", str(_free_port()), SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_BOT_TOKEN="xoxb-wrong")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert "error: cannot start the Slack app: Slack refused SLACK_BOT_TOKEN (" in out and "invalid_auth" in out, out
    assert "Traceback" not in out, out
