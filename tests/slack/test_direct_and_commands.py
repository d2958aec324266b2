"""Mentions, DMs, the message shortcut, /trace commands and the buttons under an answer."""

from __future__ import annotations

import json
import time

from tests.slack import payloads
from tests.slack.blocks import buttons, texts
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE


def test_a_mention_that_matches_nothing_still_gets_an_answer_saying_so(slack):
    event = payloads.mention("the dashboard font is too small")
    assert slack.event(event).status == 200
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == event["ts"]
    assert "No known error matched" in post["text"]


def test_a_mention_below_the_threshold_gets_the_best_guesses_marked_as_not_confident(slack):
    slack.command("config threshold 99", user="U0ADMIN")
    slack.event(payloads.mention(OOM_LINE))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    shown = texts(post["blocks"])
    assert "Nothing matched with confidence (threshold 99)" in shown
    assert "Test: CUDA out of memory" in shown and "score 92" in shown
    assert "Helpful" not in buttons(post["blocks"])


def test_a_mention_with_an_error_gets_the_full_answer_and_the_message_event_is_not_answered_twice(slack):
    event = payloads.mention(OOM_LINE)
    as_message = dict(event, type="message", channel_type="channel")
    slack.event(as_message)  # Slack sends both a message and an app_mention event for a mention
    slack.event(event)
    slack.idle()
    posts = slack.fake.posts()
    assert len(posts) == 1 and "Test: CUDA out of memory" in texts(posts[0]["blocks"])


def test_a_direct_message_is_always_answered(slack):
    slack.event(
        payloads.message("is there an entry for flaky dataloaders?", channel="D0ALICE", channel_type="im")
    )
    post = slack.fake.wait_for(lambda: slack.fake.posts("D0ALICE"))[0]
    assert post["text"]


def test_the_message_shortcut_diagnoses_a_reply_inside_a_thread_in_that_thread(slack):
    root = payloads.new_ts()
    target = payloads.message(f"[rank5]: {NCCL_LINE}", thread_ts=root)
    resp = slack.interaction(payloads.message_action(target))
    assert resp.status == 200
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == root and post["channel"] == "C0TRAIN"
    assert "Test: NCCL watchdog timeout" in texts(post["blocks"])


def test_the_message_shortcut_in_a_channel_tracebot_is_not_in_answers_the_clicker_through_response_url(slack):
    slack.fake.not_in.add("C0PRIVATE")
    target = payloads.message(f"[rank5]: {NCCL_LINE}", channel="C0PRIVATE")
    hook = f"{slack.fake.base}/response/T0001/1/def"
    assert slack.interaction(payloads.message_action(target, channel="C0PRIVATE", response_url=hook)).status == 200
    answer = slack.fake.wait_for(lambda: slack.fake.calls_to("response_url"))[0].params
    slack.idle()
    assert answer["response_type"] == "ephemeral"
    assert "Test: NCCL watchdog timeout" in texts(answer["blocks"])
    # the only post was the refused attempt in the channel itself; no error message went anywhere
    assert [p["channel"] for p in slack.fake.posts()] == ["C0PRIVATE"]


def test_trace_help_lists_builtins_and_plugin_commands_at_once(slack):
    resp = slack.command("help")
    assert resp.status == 200
    body = resp.json()
    assert body["response_type"] == "ephemeral"
    shown = texts(body["blocks"])
    for usage in ("/trace diagnose", "/trace kb", "/trace config", "/trace slow &lt;job&gt;", "/trace big"):
        assert usage in shown
    assert slack.fake.posts() == []


def test_trace_slow_posts_a_parent_a_progress_line_and_the_result_in_its_thread(slack):
    started = time.monotonic()
    resp = slack.command("slow 123")
    assert resp.status == 200 and resp.body == ""
    assert time.monotonic() - started < 3
    slack.idle()
    posts = slack.fake.posts("C0TRAIN")
    parent, progress, result = posts
    assert "thread_ts" not in parent or parent["thread_ts"] is None
    assert "/trace slow 123" in parent["text"] and "<@U0ALICE>" in parent["text"]
    assert progress["thread_ts"] == result["thread_ts"]
    assert "3 of 4 ranks stuck" in texts(result["blocks"])
    progress_ts = slack.fake.calls_to("chat.postMessage")[1].response["ts"]
    progress_edits = [
        u.params["text"] for u in slack.fake.calls_to("chat.update") if u.params["ts"] == progress_ts
    ]
    assert "looking at job 123" in progress_edits[0] and "finished" in progress_edits[-1]
    updates = slack.fake.calls_to("chat.update")
    final_parent = [u for u in updates if "/trace slow 123" in u.params["text"]][-1]
    assert "3 of 4 ranks stuck" in final_parent.params["text"]
    run = slack.tracebot.store.trace_runs()[0]
    assert (run["command"], run["status"], json.loads(run["args"])) == ("slow", "warning", ["123"])


def test_running_the_same_trace_twice_while_it_runs_gives_the_running_one(slack):
    slack.slow.release.clear()
    try:
        assert slack.command("slow 77").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        second = slack.command("slow 77").json()
        assert "already running" in second["text"] and "fake.slack.com/archives/C0TRAIN" in second["text"]
    finally:
        slack.slow.release.set()
    slack.idle()
    assert slack.slow.runs == [77]
    assert len([p for p in slack.fake.posts() if "/trace slow 77" in p["text"]]) == 1


def test_the_same_trace_again_in_its_channel_is_pointed_at_the_run_without_writing_an_inbox_row(slack, monkeypatch):
    """The second `/trace slow 77` wrote the user's command to the inbox, then deleted it on finding the
    run: two writes (and the text on disk) for a reply that needs none. A restart cannot owe it anything:
    it was answered at once, and the first run's row stands for the work."""
    store = slack.tracebot.store
    written: list[dict] = []
    add_work = store.add_work
    monkeypatch.setattr(store, "add_work", lambda work: written.append(work.payload) or add_work(work))
    slack.slow.release.clear()
    try:
        assert slack.command("slow 77").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        second = slack.command("slow 77").json()
        assert "already running" in second["text"]
        assert [w["text"] for w in written] == ["slow 77"] and store.count("inbox") == 1
    finally:
        slack.slow.release.set()
    slack.idle()
    assert slack.slow.runs == [77] and store.count("inbox") == 0


def test_a_usage_error_is_answered_at_once_and_runs_nothing(slack):
    body = slack.command("slow abc").json()
    assert "give one job number" in body["text"] and "/trace slow &lt;job&gt;" in texts(body["blocks"])
    slack.idle()
    assert slack.slow.runs == [] and slack.fake.posts() == []


def test_trace_diagnose_answers_in_the_commands_thread_with_buttons(slack):
    slack.command(f"diagnose {OOM_LINE}")
    slack.idle()
    parent, progress, answer = slack.fake.calls_to("chat.postMessage")
    assert progress.params["thread_ts"] == answer.params["thread_ts"] == parent.response["ts"]
    assert "Test: CUDA out of memory" in texts(answer.params["blocks"])
    assert "Helpful" in buttons(answer.params["blocks"])


def test_trace_kb_searches_the_knowledge_base(slack):
    body = slack.command("kb out of memory").json()
    assert "Test: CUDA out of memory" in texts(body["blocks"])


def test_trace_config_is_for_admins_and_changes_the_channels_behaviour(slack):
    refused = slack.command("config auto-reply off", user="U0ALICE").json()
    assert "Only tracebot admins" in refused["text"]
    assert slack.tracebot.store.channel_settings("C0TRAIN").auto_reply is True
    changed = slack.command("config auto-reply off threshold 80", user="U0ADMIN").json()
    assert "auto-reply" in texts(changed["blocks"]) and "off" in texts(changed["blocks"])
    slack.event(payloads.message(OOM_LINE))
    slack.idle()
    assert slack.fake.posts() == [], "auto-reply is off in this channel"
    slack.event(payloads.mention(OOM_LINE))
    slack.fake.wait_for(lambda: slack.fake.posts())


def test_a_mistyped_config_word_is_quoted_back_as_code_it_cannot_break_out_of(slack):
    # an admin's typo comes back inside a code span; a backtick in it used to end the span and leave the rest
    # as live formatting
    body = slack.command("config *auto`*reply off", user="U0ADMIN").json()
    shown = body["text"] + texts(body.get("blocks", []))
    assert "unknown setting `*autoˋ*reply`" in shown and "`*auto`" not in shown


def test_a_channel_threshold_above_the_score_silences_auto_replies(slack):
    slack.command("config threshold 99", user="U0ADMIN")
    slack.event(payloads.message(OOM_LINE))
    slack.idle()
    assert slack.fake.posts() == []


def test_helpful_and_not_this_are_recorded_and_why_and_all_steps_goes_only_to_the_clicker(slack):
    msg = payloads.message(f"{OOM_LINE}\n{NCCL_LINE}")
    slack.event(msg)
    answer = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    slack.idle()
    reply_ts = slack.tracebot.store.recent_diagnoses()[0].reply_ts
    b = buttons(answer["blocks"])
    assert set(b) == {"Helpful", "Not this", "Why & all steps"}
    for label, user in (("Helpful", "U0ALICE"), ("Not this", "U0BOB")):
        form = payloads.block_action(
            b[label]["action_id"],
            b[label]["value"],
            channel="C0TRAIN",
            message_ts=reply_ts,
            thread_ts=msg["ts"],
            user=user,
        )
        assert slack.interaction(form).status == 200
    slack.interaction(
        payloads.block_action(
            b["Why & all steps"]["action_id"],
            b["Why & all steps"]["value"],
            channel="C0TRAIN",
            message_ts=reply_ts,
            thread_ts=msg["ts"],
            user="U0CAROL",
        )
    )
    slack.idle()
    from tracebot.store.stats import entry_stats, not_this_feedback

    stats = {s.entry_id: s for s in entry_stats(slack.tracebot.store)}
    shown_id = "test-cuda-oom" if "`test-cuda-oom` · score" in texts(answer["blocks"]) else "test-nccl-watchdog"
    assert (stats[shown_id].helpful, stats[shown_id].not_this) == (1, 1)
    assert not_this_feedback(slack.tracebot.store)[0]["user"] == "U0BOB"
    ephemerals = slack.fake.calls_to("chat.postEphemeral")
    assert {c.params["user"] for c in ephemerals} == {"U0ALICE", "U0BOB", "U0CAROL"}
    # Carol alone sees the cause, every step and the other match; the thread keeps one answer.
    why = next(c.params for c in ephemerals if c.params["user"] == "U0CAROL")
    other_id = ({"test-cuda-oom", "test-nccl-watchdog"} - {shown_id}).pop()
    why_text = texts(why["blocks"])
    assert why["thread_ts"] == msg["ts"] and "Why:" in why_text and other_id in why_text
    assert len(slack.fake.posts()) == 1


def test_app_home_shows_entries_by_tag_recent_diagnoses_and_helpful_entries(slack):
    slack.event(payloads.message(OOM_LINE))
    slack.fake.wait_for(lambda: slack.fake.posts())
    slack.idle()
    slack.event(payloads.home_opened("U0ALICE"))
    call = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[0]
    assert call.params["user_id"] == "U0ALICE"
    view = call.params["view"]
    assert view["type"] == "home"
    shown = texts(view["blocks"])
    assert "2 entries" in shown and "*cuda* (1)" in shown and "*nccl* (1)" in shown
    assert "Test: CUDA out of memory · auto" in shown


def test_trace_in_a_channel_tracebot_is_not_in_answers_in_the_users_dm(slack):
    slack.fake.not_in.add("C0PRIVATE")
    assert slack.command("slow 9", channel="C0PRIVATE").status == 200
    slack.idle()
    # the DM's own channel id, from conversations.open: a user id is not a channel
    assert slack.fake.calls_to("conversations.open")[0].params["users"] == "U0ALICE"
    assert slack.fake.posts("U0ALICE") == []
    dm = slack.fake.posts("D0ALICE")
    assert "not in <#C0PRIVATE>" in dm[0]["text"] and "/invite @tracebot" in dm[0]["text"]
    assert any("3 of 4 ranks stuck" in texts(p["blocks"]) for p in dm)


def test_a_mention_with_a_command_in_a_thread_runs_it_in_that_thread(slack):
    root = payloads.new_ts()
    slack.event(payloads.mention("slow 55", thread_ts=root))
    slack.idle()
    posts = slack.fake.posts()
    assert posts and all(p["thread_ts"] == root for p in posts)
    assert "3 of 4 ranks stuck" in texts(posts[-1]["blocks"]) and slack.slow.runs == [55]


def test_an_at_channel_in_a_pasted_log_is_never_echoed_as_a_ping(slack):
    slack.event(payloads.message(f"<!channel> <@U0BOB> {OOM_LINE} <!here>"))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    sent = json.dumps(post)
    assert "<!channel>" not in sent and "<!here>" not in sent and "<@U0BOB>" not in sent


def test_a_mention_whose_diagnosis_fails_still_gets_an_apology_in_the_thread(slack, monkeypatch):
    def broken(text, **_options):
        raise RuntimeError("matcher bug with xoxb-fake-bot-token")

    monkeypatch.setattr(slack.tracebot.knowledge.matcher, "diagnose", broken)
    event = payloads.mention(OOM_LINE)
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == event["ts"] and "could not diagnose that (RuntimeError)" in post["text"]
    assert "xoxb" not in post["text"]


def test_a_japanese_mention_whose_diagnosis_fails_gets_its_apology_in_japanese(slack, monkeypatch):
    def broken(text, **_options):
        raise RuntimeError("matcher bug")

    monkeypatch.setattr(slack.tracebot.knowledge.matcher, "diagnose", broken)
    event = payloads.mention(f"学習中にこのエラーで落ちました。どうすればいいですか？\n{OOM_LINE}")
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == event["ts"]
    assert "すみません、診断できませんでした (RuntimeError)" in post["text"] and "Sorry" not in post["text"]


def test_app_home_shows_a_viewer_only_diagnoses_from_conversations_they_are_in_or_their_own(slack):
    slack.fake.channel_members = {"C0TRAIN": ["U0ALICE", "U0BOB"], "C0SECRET": ["U0CAROL"]}
    slack.event(payloads.message(OOM_LINE, channel="C0TRAIN", user="U0ALICE"))
    slack.event(payloads.message(NCCL_LINE, channel="C0SECRET", user="U0CAROL"))
    slack.fake.wait_for(lambda: len(slack.fake.posts()) == 2)
    slack.idle()
    homes = {}
    for viewer in ("U0BOB", "U0CAROL", "U0DAVE"):
        slack.event(payloads.home_opened(viewer))
        slack.idle()
        call = [c for c in slack.fake.calls_to("views.publish") if c.params["user_id"] == viewer][-1]
        homes[viewer] = texts(call.params["view"]["blocks"])
    assert "Test: CUDA out of memory · auto" in homes["U0BOB"]
    assert "Test: NCCL watchdog timeout · auto" not in homes["U0BOB"]
    assert "Test: NCCL watchdog timeout · auto" in homes["U0CAROL"]
    assert "Test: CUDA out of memory · auto" not in homes["U0CAROL"]
    assert "· auto" not in homes["U0DAVE"]
