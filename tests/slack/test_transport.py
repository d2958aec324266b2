"""Request signatures, Slack's limits, 429s, rate limiting and secrets: the transport's promises."""

from __future__ import annotations

import json
import time

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.tiny_kb import OOM_LINE


def test_a_bad_signature_is_refused_with_401_and_nothing_runs(slack):
    body = json.dumps(payloads.event_callback(payloads.message(OOM_LINE)))
    resp = slack.send(body, "application/json", headers={"X-Slack-Signature": "v0=" + "0" * 64})
    assert resp.status == 401
    slack.idle()
    assert slack.fake.posts() == []


def test_a_request_signed_more_than_five_minutes_ago_is_refused_with_401(slack):
    resp = slack.event(payloads.message(OOM_LINE), timestamp=int(time.time()) - 6 * 60)
    assert resp.status == 401
    form = "application/x-www-form-urlencoded"
    assert slack.send(payloads.slash("help"), form, timestamp=int(time.time()) - 301).status == 401
    assert slack.send(payloads.slash("help"), form, timestamp=int(time.time()) - 240).status == 200
    slack.idle()
    assert slack.fake.posts() == []


def test_a_result_longer_than_one_message_is_cut_and_the_full_text_uploaded_in_the_thread(slack):
    slack.command("big")
    slack.idle()
    parent, _progress, result = slack.fake.calls_to("chat.postMessage")
    blocks = result.params["blocks"]
    assert len(blocks) <= 50
    assert all(len(texts([b])) <= 3000 for b in blocks)
    assert len(result.params["text"]) <= 40000
    assert "attached file" in texts(blocks)
    uploads = slack.fake.uploads
    by_name = {u["filename"]: u for u in uploads.values()}
    full, attachment = by_name["tracebot-result.txt"], by_name["ranks.txt"]
    for up in (full, attachment):
        assert up["completed"] and up["channel"] == "C0TRAIN" and up["thread_ts"] == parent.response["ts"]
    assert full["content"].decode().count("*rank 59*\nframe line") == 1 and len(full["content"]) > 40000
    assert attachment["content"] == b"rank 0: ok\n" * 10


def test_a_result_of_many_screens_is_a_short_summary_with_each_stack_group_once_and_the_rest_in_a_file(slack):
    slack.command("big")
    slack.idle()
    _parent, _progress, result = slack.fake.calls_to("chat.postMessage")
    shown = texts(result.params["blocks"])
    assert len(shown) < 4000 and len(result.params["text"]) < 4000
    assert shown.count("ranks 0–58 (59) in `all_reduce (train.py:7)`") == 1
    assert shown.count("odd one out · rank 59 (1) in `read_shard (data.py:3)`") == 1
    assert "frame line\nframe line" not in shown
    full = {u["filename"]: u for u in slack.fake.uploads.values()}["tracebot-result.txt"]["content"].decode()
    assert full.count("*rank 59*\nframe line") == 1 and full.count("frame line") == 60 * 400
    assert full.count("odd one out") == 1


def test_a_429_from_slack_is_retried_after_the_retry_after_delay(slack):
    slack.fake.fail_next("chat.postMessage", status=429, retry_after=1)
    slack.event(payloads.message(OOM_LINE))
    slack.idle()
    attempts = slack.fake.calls_to("chat.postMessage")
    assert len(attempts) == 2
    assert attempts[1].at - attempts[0].at >= 0.95
    assert len(slack.tracebot.store.recent_diagnoses()) == 1


def test_the_bot_token_and_signing_secret_never_appear_in_what_is_sent_to_slack(slack):
    slack.event(payloads.message(OOM_LINE))
    slack.command("big")
    slack.command("help")
    slack.event(payloads.home_opened())
    slack.idle()
    recorded = slack.fake.all_recorded_text()
    assert recorded, "something was sent"
    for secret in (slack.config.slack_bot_token, slack.config.slack_signing_secret):
        assert secret not in recorded
    assert all(
        c.authorization == f"Bearer {slack.fake.bot_token}" for c in slack.fake.calls if c.method != "upload"
    )


def test_the_request_url_check_slack_makes_when_installing_is_answered(slack):
    body = json.dumps(
        {
            "token": "legacy",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
            "type": "url_verification",
        }
    )
    resp = slack.send(body, "application/json")
    assert resp.status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in resp.body


def test_a_500_from_slack_when_posting_an_answer_is_retried_and_the_answer_arrives(slack):
    slack.fake.fail_next("chat.postMessage", status=500)
    slack.event(payloads.mention(OOM_LINE))
    slack.idle()
    attempts = slack.fake.calls_to("chat.postMessage")
    assert len(attempts) == 2
    assert attempts[0].params["blocks"] == attempts[1].params["blocks"]
    assert "Test: CUDA out of memory" in texts(attempts[1].params["blocks"])
    assert "could not diagnose" not in json.dumps([a.params for a in attempts])


def test_a_file_upload_slack_refuses_is_said_in_the_thread_and_the_trace_still_reports_what_it_found(slack):
    slack.fake.fail_next("files.getUploadURLExternal", status=200)  # ok: false, not retried
    slack.command("big")
    slack.idle()
    parent, _progress, result, *notes = slack.fake.calls_to("chat.postMessage")
    thread = parent.response["ts"]
    assert "attached file" in texts(result.params["blocks"])
    note = texts(notes[0].params["blocks"])
    assert notes[0].params["thread_ts"] == thread
    assert "could not attach `tracebot-result.txt`" in note and "ratelimited" in note
    # the other attachment still arrives, and the run says what the job did, not that the trace failed
    assert [u["filename"] for u in slack.fake.uploads.values() if u.get("completed")] == ["ranks.txt"]
    final = slack.fake.calls_to("chat.update")[-1].params
    assert "60 ranks" in final["text"] and "failed" not in final["text"]


def test_a_reply_only_the_caller_sees_says_it_was_cut_without_promising_a_file_that_never_comes(slack):
    reply = slack.command("bigquick").json()
    shown = texts(reply["blocks"]) + reply["text"]
    assert len(reply["blocks"]) <= 50 and all(len(texts([b])) <= 3000 for b in reply["blocks"])
    assert "cut; the full text did not fit" in shown and "a reply only you see cannot carry a file" in shown
    assert "attached file" not in shown
    slack.idle()
    assert slack.fake.uploads == {} and slack.fake.posts() == []


def test_an_answer_whose_blocks_slack_refuses_is_posted_as_text_with_its_fix(slack):
    slack.fake.fail_next("chat.postMessage", status=200, error="msg_blocks_too_long")  # Slack's refusal: ok false
    mention = payloads.mention(f"学習中にこのエラーで落ちました <!channel>\n{OOM_LINE}")
    slack.event(mention)
    slack.idle()
    posts = [p for p in slack.fake.posts() if p.get("thread_ts") == mention["ts"]]
    assert len(posts) == 2 and posts[0]["blocks"]  # the refused message, then the same answer as text
    said = posts[1]["text"]
    assert not posts[1].get("blocks")
    assert "テスト: CUDA のメモリ不足" in said and "マイクロバッチ" in said, said
    assert "Sorry" not in said and "refused" not in said and "<!channel>" not in said
    assert slack.fake.uploads == {}  # nothing was cut: no file to promise


def test_an_answer_slack_refuses_even_as_text_is_not_called_a_failed_diagnosis(slack):
    for _ in range(2):
        slack.fake.fail_next("chat.postMessage", status=200, error="invalid_blocks")  # Slack's refusal: ok false
    mention = payloads.mention(OOM_LINE)
    slack.event(mention)
    slack.idle()
    said = [p["text"] for p in slack.fake.posts() if p.get("thread_ts") == mention["ts"]][-1]
    assert "could not diagnose" not in said
    assert "I diagnosed this but Slack refused my answer (Slack said: invalid_blocks)" in said
