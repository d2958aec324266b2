"""Edited messages: an edit that adds an error is answered, an edit that changes the error changes the
answer in place, and no edit is answered twice (Slack redelivers events it had no ack for in time)."""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE
from tracebot.store.stats import entry_stats

OOM_TITLE, NCCL_TITLE = "Test: CUDA out of memory", "Test: NCCL watchdog timeout"


def replies_to(slack, message) -> list[dict]:
    """What tracebot has in the message's thread now (edits applied)."""
    return slack.fake.thread_replies(message["channel"], message["ts"])


def test_a_message_edited_to_add_an_error_is_answered_once_however_often_slack_delivers_the_edit(slack):
    first = payloads.message("training died again, pasting the log in a sec")
    slack.event(first)
    slack.idle()
    assert not slack.fake.posts(), "nothing known in it: no answer"
    edit = payloads.edited(first, f"training died again:\n{OOM_LINE}")
    assert slack.event(edit, event_id="Ev0EDIT1").status == 200
    slack.idle()
    assert slack.event(edit, event_id="Ev0EDIT1", headers={"X-Slack-Retry-Num": "1"}).status == 200
    assert slack.event(edit, event_id="Ev0EDIT2").status == 200  # the same edit under another event id
    slack.idle()
    (answer,) = replies_to(slack, first)
    assert OOM_TITLE in texts(answer["blocks"])


def test_an_edit_that_changes_the_error_updates_the_answer_instead_of_posting_another(slack):
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    (answer,) = replies_to(slack, first)
    assert OOM_TITLE in texts(answer["blocks"])
    slack.event(payloads.edited(first, NCCL_LINE))
    slack.idle()
    (answer,) = replies_to(slack, first)
    shown = texts(answer["blocks"])
    assert NCCL_TITLE in shown and OOM_TITLE not in shown, shown
    assert len(slack.fake.posts()) == 1, "the answer was changed, not posted again"


def test_an_edit_that_leaves_the_answer_as_it_was_changes_nothing(slack):
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    slack.event(payloads.edited(first, f"{OOM_LINE}\n(on node 7)"))
    slack.idle()
    assert len(slack.fake.posts()) == 1 and not slack.fake.calls_to("chat.update")


def test_a_link_unfurled_into_a_message_is_not_an_edit(slack):
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    unfurl = payloads.edited(first, NCCL_LINE)
    del unfurl["message"]["edited"]  # Slack changed the message (an attachment), its author did not
    slack.event(unfurl)
    slack.idle()
    assert len(slack.fake.posts()) == 1 and not slack.fake.calls_to("chat.update")


def test_an_edit_that_changes_the_answer_leaves_one_diagnosis_in_the_stats(slack):
    """The answer is changed in place; so is its record: the stats counted the message twice (once for
    the out-of-memory answer it no longer gives), and the maintainers' table was off by every edit."""
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    slack.event(payloads.edited(first, NCCL_LINE))
    slack.idle()
    matched = {s.entry_id: s.matched for s in entry_stats(slack.tracebot.store)}
    assert matched == {"test-nccl-watchdog": 1}, matched


def test_an_updated_answer_slack_could_not_take_is_updated_once_slack_is_back(slack):
    """chat.update met a Slack outage: the failure was only logged and the thread kept saying "out of
    memory" under a message that now shows an NCCL timeout. The update is now tried again, as a post is."""
    slack.tracebot.redelivery.delays_s = (0.05,)
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    slack.fake.fail_until_lifted("chat.update")
    slack.event(payloads.edited(first, NCCL_LINE))
    slack.fake.wait_for(lambda: len(slack.fake.calls_to("chat.update")) >= 6, timeout=30)  # two jobs' tries
    slack.fake.lift("chat.update")
    slack.idle()
    (answer,) = replies_to(slack, first)
    shown = texts(answer["blocks"])
    assert NCCL_TITLE in shown and OOM_TITLE not in shown, shown


def test_an_answer_slack_refuses_to_update_is_replaced_by_a_new_reply_that_says_it_changed(slack):
    first = payloads.message(OOM_LINE)
    slack.event(first)
    slack.idle()
    slack.fake.fail_next("chat.update", status=200, error="cant_update_message")
    slack.event(payloads.edited(first, NCCL_LINE))
    slack.idle()
    old, new = replies_to(slack, first)
    assert OOM_TITLE in texts(old["blocks"])
    shown = texts(new["blocks"])
    assert NCCL_TITLE in shown and "edited" in shown and "cant_update_message" in shown, shown
    slack.event(payloads.edited({**first, "text": NCCL_LINE}, OOM_LINE))  # a later edit changes the new reply
    slack.idle()
    assert len(replies_to(slack, first)) == 2
    assert OOM_TITLE in texts(replies_to(slack, first)[1]["blocks"])
