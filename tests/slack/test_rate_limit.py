"""About one message per second per channel: a burst of answers in one channel is spaced out."""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.harness import make_config, running_app
from tests.slack.tiny_kb import OOM_LINE


def test_answers_in_one_channel_are_spaced_to_about_one_per_second(
    tmp_path, fake_slack, kb_dir, plugin_host, monkeypatch
):
    monkeypatch.setenv("TRACEBOT_CHANNEL_RATE", "1")
    monkeypatch.setenv("TRACEBOT_CHANNEL_BURST", "1")
    config = make_config(tmp_path, fake_slack, kb_dir)
    with running_app(config, fake_slack, host=plugin_host[0]) as slack:
        for _ in range(3):
            slack.event(payloads.message(OOM_LINE, channel="C0BUSY"))
        slack.event(payloads.message(OOM_LINE, channel="C0QUIET"))
        fake_slack.wait_for(lambda: len(fake_slack.posts()) == 4, timeout=10)
    busy = [c.at for c in fake_slack.calls_to("chat.postMessage") if c.params["channel"] == "C0BUSY"]
    quiet = [c.at for c in fake_slack.calls_to("chat.postMessage") if c.params["channel"] == "C0QUIET"]
    assert busy[1] - busy[0] >= 0.9 and busy[2] - busy[1] >= 0.9
    assert quiet[0] - busy[0] < 0.9, "another channel does not wait behind the busy one"
