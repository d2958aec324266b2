"""About one message per second per channel: a burst of answers in one channel is spaced out."""

from __future__ import annotations

import threading

from bot.jobs import JobPool
from bot.slack.app import build_app
from bot.slack.http import make_http_server
from tests.slack import payloads
from tests.slack.conftest import Slack, make_config
from tests.slack.tiny_kb import OOM_LINE


def test_answers_in_one_channel_are_spaced_to_about_one_per_second(
    tmp_path, fake_slack, kb_dir, plugin_host, monkeypatch
):
    monkeypatch.setenv("TRACEBOT_CHANNEL_RATE", "1")
    monkeypatch.setenv("TRACEBOT_CHANNEL_BURST", "1")
    app, tracebot = build_app(
        make_config(tmp_path, fake_slack, kb_dir), host=plugin_host[0], jobs=JobPool(workers=4)
    )
    server = make_http_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        slack = Slack(
            fake_slack,
            tracebot,
            f"http://127.0.0.1:{server.server_address[1]}/slack/events",
            plugin_host[1],
            tracebot.config,
            None,
        )  # type: ignore[arg-type]
        for _ in range(3):
            slack.event(payloads.message(OOM_LINE, channel="C0BUSY"))
        slack.event(payloads.message(OOM_LINE, channel="C0QUIET"))
        fake_slack.wait_for(lambda: len(fake_slack.posts()) == 4, timeout=10)
        busy = [c.at for c in fake_slack.calls_to("chat.postMessage") if c.params["channel"] == "C0BUSY"]
        quiet = [c.at for c in fake_slack.calls_to("chat.postMessage") if c.params["channel"] == "C0QUIET"]
        assert busy[1] - busy[0] >= 0.9 and busy[2] - busy[1] >= 0.9
        assert quiet[0] - busy[0] < 0.9, "another channel does not wait behind the busy one"
    finally:
        server.shutdown()
        server.server_close()
        tracebot.jobs.shutdown()
