"""Slack down, Slack flaky: an accepted message is answered once Slack takes posts again, exactly once.

The real Bolt app over signed HTTP against the fake Slack Web API, made to answer chat.postMessage with
server errors: for a while (an outage through every try of the answer and of the apology), once after
the post took effect (a 500 that lost Slack's answer, not the message), or with a 502/504 (a gateway).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict
from typing import Any

import pytest

from tests.fakes.fake_slack import FakeSlack
from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import Slack
from tests.slack.tiny_kb import OOM_LINE
from tracebot.slack.inbound import from_message
from tracebot.slack.outbox import POST_METADATA_TYPE
from tracebot.store import Store, Work
from tracebot.store import owner as owners
from tracebot.store.stats import entry_stats

POST = "chat.postMessage"


def answers(fake: FakeSlack, event: dict[str, Any]) -> list[dict[str, Any]]:
    """tracebot's answers in the thread of ``event``, as they are in Slack now."""
    return [m for m in fake.thread_replies(event["channel"], event["ts"]) if "Test: CUDA out of memory" in texts(m.get("blocks"))]


def apologies(fake: FakeSlack) -> list[str]:
    return [p["text"] for p in fake.posts() if p["text"].startswith((":x:", ":warning:"))]


def tune(slack: Slack, **settings: Any) -> None:
    """Shorter waits between tries (or a shorter time before giving up) than a deployment's. Set only
    where tracebot has them, so that run against a tracebot without retries, the test fails on what the
    user sees, not on the setting."""
    redelivery = getattr(slack.tracebot, "redelivery", None)
    for name, value in settings.items():
        if redelivery is not None:
            setattr(redelivery, name, value)


def a_dead_owner() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    dead = owners.token(proc.pid)
    proc.kill()
    proc.wait(timeout=10)
    return dead


def mention_through_an_outage(slack: Slack) -> dict[str, Any]:
    """A mention whose answer's three tries and apology's three all met Slack down; then Slack is back."""
    slack.fake.fail_until_lifted(POST)
    mention = payloads.mention(OOM_LINE)
    assert slack.event(mention).status == 200
    slack.fake.wait_for(lambda: len(slack.fake.calls_to(POST)) >= 6, timeout=30)
    slack.fake.lift(POST)
    slack.idle()
    return mention


def test_a_mention_slack_takes_neither_the_answer_nor_the_apology_for_is_answered_once_slack_is_back(start_app):
    slack = start_app()
    tune(slack, delays_s=(0.05,))
    mention = mention_through_an_outage(slack)
    assert len(answers(slack.fake, mention)) == 1
    assert slack.tracebot.store.count("inbox") == 0


def test_work_slack_could_not_take_is_answered_by_the_next_start_after_a_restart(start_app, tmp_path):
    first = start_app()
    tune(first, delays_s=(600.0,))  # its next try would come long after the restart
    first.fake.fail_until_lifted(POST)
    mention = payloads.mention(OOM_LINE)
    first.event(mention)
    first.fake.wait_for(lambda: len(first.fake.calls_to(POST)) >= 6, timeout=30)
    first.listeners.wait_idle(20)
    first.tracebot.jobs.wait_idle(20)
    first.tracebot.shutdown()  # stopped while Slack was down
    store = Store(tmp_path / "tracebot.sqlite3")
    assert store.count("inbox") == 1, "the message is still owed an answer"
    store.db.execute("UPDATE inbox SET owner = ?", [a_dead_owner()])  # its process is gone
    store.db.conn.commit()
    store.close()
    first.fake.lift(POST)
    second = start_app()
    assert second.tracebot.resume() == 1
    second.idle()
    assert len(answers(second.fake, mention)) == 1
    assert second.tracebot.store.count("inbox") == 0


def test_an_answer_slack_never_took_is_given_up_after_the_time_work_may_wait_and_shown_to_admins(start_app):
    slack = start_app()
    tune(slack, give_up_after_s=0.0)
    slack.fake.fail_until_lifted(POST)
    mention = payloads.mention(OOM_LINE)
    slack.event(mention)
    slack.idle()
    assert slack.tracebot.store.count("inbox") == 0
    slack.fake.lift(POST)
    slack.event(payloads.home_opened("U0ADMIN"))
    home = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[-1].params["view"]["blocks"]
    shown = texts(home)
    assert "Answers given up on" in shown and f"mention C0TRAIN/{mention['ts']}" in shown, shown
    slack.event(payloads.home_opened("U0ALICE"))
    home = slack.fake.wait_for(lambda: len(slack.fake.calls_to("views.publish")) == 2 and slack.fake.calls_to("views.publish"))
    assert "gave up on some answers" in texts(home[-1].params["view"]["blocks"])


def test_a_post_slack_took_before_answering_500_is_not_posted_twice(start_app):
    slack = start_app()
    slack.fake.fail_next(POST, status=500, error="internal_error", landed=True)
    mention = payloads.mention(OOM_LINE)
    slack.event(mention)
    slack.idle()
    assert len(answers(slack.fake, mention)) == 1
    assert not apologies(slack.fake)
    looked = slack.fake.calls_to("conversations.replies")
    assert looked and str(looked[0].params.get("include_all_metadata")).lower() in ("true", "1")


@pytest.mark.parametrize("status", [502, 504])
def test_a_gateway_error_on_a_post_is_tried_again(start_app, status):
    slack = start_app()
    slack.fake.fail_next(POST, status=status, error="bad_gateway")
    mention = payloads.mention(OOM_LINE)
    slack.event(mention)
    slack.idle()
    assert len(answers(slack.fake, mention)) == 1
    assert not apologies(slack.fake)


def test_a_restart_after_the_answer_was_posted_does_not_post_it_again(start_app, tmp_path):
    """A process killed after Slack took its answer but before the inbox row went: the next start looks
    in the thread for the answer, finds it, and posts nothing."""
    slack = start_app()
    mention = payloads.mention(OOM_LINE)
    work_id = slack.tracebot.store.add_work(
        Work("direct", {"msg": asdict(from_message(mention)), "source": "mention"}, a_dead_owner())
    )
    slack.fake.posted[("C0TRAIN", mention["ts"])] = [{
        "type": "message", "user": "UTRACEBOT", "bot_id": "B0001", "ts": "1763000001.000001", "thread_ts": mention["ts"],
        "text": "the answer", "metadata": {"event_type": POST_METADATA_TYPE, "event_payload": {"post": f"w{work_id}.1"}},
    }]
    assert slack.tracebot.resume() == 1
    slack.idle()
    assert slack.fake.posts() == [], "the answer was in the thread already"
    assert slack.tracebot.store.count("inbox") == 0


def test_a_mention_whose_inbox_row_could_not_be_written_is_still_answered_once_slack_is_back(start_app, tmp_path):
    """The store turned read-only, so the accepted mention has no inbox row; Slack then took neither the
    answer nor the apology. It was lost (nothing retried it, nobody was told); it is now tried again in
    this process like any other accepted work."""
    slack = start_app(store=Store(tmp_path / "ro.sqlite3", timeout_s=0.2))
    tune(slack, delays_s=(0.05,))
    slack.tracebot.store.db.execute("PRAGMA query_only = ON")  # every write fails: no inbox row
    mention = mention_through_an_outage(slack)
    assert len(answers(slack.fake, mention)) == 1


def test_an_answer_without_an_inbox_row_that_slack_never_took_is_shown_to_admins_as_given_up(start_app, tmp_path):
    slack = start_app(store=Store(tmp_path / "ro.sqlite3", timeout_s=0.2))
    tune(slack, give_up_after_s=0.0)
    slack.tracebot.store.db.execute("PRAGMA query_only = ON")
    slack.fake.fail_until_lifted(POST)
    mention = payloads.mention(OOM_LINE)
    slack.event(mention)
    slack.idle()
    slack.fake.lift(POST)
    slack.event(payloads.home_opened("U0ADMIN"))
    home = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[-1].params["view"]["blocks"]
    assert f"mention C0TRAIN/{mention['ts']}" in texts(home)


def test_a_trace_result_slack_did_not_take_is_posted_once_slack_is_back(start_app):
    """``/trace slow 7`` ran; when its result was due Slack answered every post with 503. The result was
    dropped (the parent said the run finished, its thread never got what it found); it is now tried again
    like an answer, and posted once."""
    slack = start_app()
    tune(slack, delays_s=(0.05,))
    slack.slow.release.clear()
    try:
        assert slack.command("slow 7", channel="C0TRAIN", user="U0ALICE").status == 200
        slack.fake.wait_for(lambda: len(slack.fake.calls_to(POST)) >= 2)  # the parent and its progress line
        slack.fake.fail_until_lifted(POST)
    finally:
        slack.slow.release.set()
    slack.fake.wait_for(lambda: len(slack.fake.calls_to(POST)) >= 5, timeout=30)
    slack.fake.lift(POST)
    slack.idle()
    in_slack = [m for (channel, _root), ms in slack.fake.posted.items() if channel == "C0TRAIN" for m in ms]
    results = [m for m in in_slack if "3 of 4 ranks stuck" in m["text"] and m.get("thread_ts")]
    assert len(results) == 1, results
    assert slack.tracebot.store.count("inbox") == 0


def test_a_restart_note_slack_did_not_take_is_posted_once_slack_is_back(start_app):
    slack = start_app()
    tune(slack, delays_s=(0.05,))
    store = slack.tracebot.store
    work_id = store.add_work(Work("trace", {
        "text": "slow 7", "label": "slow 7", "command": "slow", "channel": "C0TRAIN", "user": "U0ALICE",
        "thread_ts": None,
    }, a_dead_owner()))
    store.set_work_thread(work_id, '["C0TRAIN", "1763000000.000100"]')
    slack.fake.fail_until_lifted(POST)
    assert slack.tracebot.resume() == 1
    slack.fake.wait_for(lambda: len(slack.fake.calls_to(POST)) >= 3, timeout=30)
    assert store.count("inbox") == 1, "the note is still owed"
    slack.fake.lift(POST)
    slack.idle()
    notes = [m["text"] for m in slack.fake.thread_replies("C0TRAIN", "1763000000.000100")]
    assert len(notes) == 1 and "did not run it again" in notes[0], notes
    assert store.count("inbox") == 0


def test_an_answer_posted_on_its_second_try_is_one_diagnosis_in_the_stats(start_app):
    slack = start_app()
    tune(slack, delays_s=(0.05,))
    mention = mention_through_an_outage(slack)
    assert len(answers(slack.fake, mention)) == 1
    assert [(s.entry_id, s.matched) for s in entry_stats(slack.tracebot.store)] == [("test-cuda-oom", 1)]


@pytest.mark.parametrize("down_from", ["parent", "result"])
def test_a_trace_result_promised_to_another_channel_is_posted_there_once_slack_is_back(start_app, down_from):
    """Bob asked from C0PUBLIC for a run already going for Carol and was told its result would come there;
    Slack was down when it finished, and his copy was only logged."""
    slack = start_app()
    tune(slack, delays_s=(0.05,))
    slack.slow.release.clear()
    try:
        assert slack.command("slow 88", channel="C0PRIVATE", user="U0CAROL").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        assert "post its result here" in slack.command("slow 88", channel="C0PUBLIC", user="U0BOB").json()["text"]
        slack.fake.wait_for(lambda: len(slack.fake.calls_to(POST)) >= 2)  # Carol's parent and progress line
        # Carol's result goes through; then Slack is down for Bob's parent, or for his result only
        slack.fake.fail_until_lifted(POST, after=1 if down_from == "parent" else 2)
    finally:
        slack.slow.release.set()
    public = [c for c in slack.fake.calls_to(POST) if c.params.get("channel") == "C0PUBLIC"]
    slack.fake.wait_for(lambda: len([c for c in slack.fake.calls_to(POST) if c.params.get("channel") == "C0PUBLIC"]) >= 4, timeout=30)
    assert not public
    slack.fake.lift(POST)
    slack.idle()
    in_public = [m for (channel, _root), ms in slack.fake.posted.items() if channel == "C0PUBLIC" for m in ms]
    said = [m for m in in_public if "3 of 4 ranks stuck" in texts(m.get("blocks"))]
    assert len([m for m in said if m.get("thread_ts")]) == 1, in_public  # the result, in Bob's thread
    assert len([m for m in said if not m.get("thread_ts")]) == 1, in_public  # the parent that says it ran
    assert slack.tracebot.store.count("inbox") == 0
