"""When tracebot has no room: a click is answered "busy, click again" where only its clicker sees it, and
what tracebot says about being busy, or about an empty mention, is said in the asker's language."""

from __future__ import annotations

import threading

from tests.slack import payloads
from tests.slack.harness import Slack
from tests.slack.tiny_kb import OOM_LINE
from tracebot.render.slack import ACTION_HELPFUL
from tracebot.service.jobs import JobPool

JA_QUESTION = "学習が途中で止まってしまいました。原因が分からないので見てもらえますか？"


def held(slack: Slack, lane: str | None = None) -> threading.Event:
    """A job the test holds in the pool (an answer stuck on a slow upload) until it sets the event."""
    gate = threading.Event()
    slack.tracebot.jobs.submit(lambda job: gate.wait(30), label="held", lane=lane)
    return gate


def test_a_click_when_the_job_pool_is_full_tells_the_clicker_to_click_again_in_their_language(start_app):
    slack = start_app(jobs=JobPool(workers=1, max_pending=1))
    gate = held(slack)
    try:
        form = payloads.block_action(
            ACTION_HELPFUL, "1:test-cuda-oom:ja", channel="C0TRAIN", message_ts="1763000000.000200",
            thread_ts="1763000000.000100",
        )
        assert slack.interaction(form).status == 200
        told = slack.fake.wait_for(lambda: slack.fake.calls_to("chat.postEphemeral"))
    finally:
        gate.set()
    slack.idle()
    (told,) = told
    assert told.params["user"] == "U0ALICE" and told.params["thread_ts"] == "1763000000.000100"
    assert "もう一度押してください" in told.params["text"], told.params["text"]


def test_a_japanese_paste_skipped_under_load_is_told_so_in_japanese(start_app):
    slack = start_app(jobs=JobPool(workers=2, max_pending=50, max_per_lane=1))
    gate = held(slack, "C0FLOOD")
    try:
        assert slack.event(payloads.message(f"{JA_QUESTION}\n{OOM_LINE}", channel="C0FLOOD")).status == 200
        slack.listeners.wait_idle(20)  # the paste was shed; its notice waits behind the held job in the lane
    finally:
        gate.set()
    slack.idle()
    (notice,) = slack.fake.posts("C0FLOOD")
    assert "飛ばしました" in notice["text"], notice["text"]


def test_an_empty_mention_in_a_japanese_thread_is_told_how_to_ask_in_japanese(slack):
    root = payloads.new_ts()
    slack.fake.add_thread("C0TRAIN", [{"ts": root, "user": "U0BOB", "text": JA_QUESTION}])
    slack.event(payloads.mention("", thread_ts=root))
    slack.idle()
    (hint,) = slack.fake.posts()
    assert hint["thread_ts"] == root and "/trace help" in hint["text"] and "貼り付け" in hint["text"], hint["text"]


def test_an_empty_mention_outside_a_thread_is_told_how_to_ask_in_english(slack):
    slack.event(payloads.mention(""))
    slack.idle()
    (hint,) = slack.fake.posts()
    assert hint["text"].startswith("Paste an error after mentioning me"), hint["text"]
