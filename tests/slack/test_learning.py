"""The knowledge base learns from Slack: votes become labelled cases, unanswered errors become a ranked
list of gaps, and maintainers see both in the App Home."""

from __future__ import annotations

import json
import os
import stat

from tests.slack import payloads
from tests.slack.blocks import buttons, texts
from tests.slack.tiny_kb import OOM_LINE
from tracebot.authoring.evaluate import load_cases
from tracebot.authoring.feedback_export import feedback_cases, write_cases
from tracebot.cli import main
from tracebot.store.stats import unanswered

HF_TOKEN = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7"
UNKNOWN = "ValueError: shard index {n} out of range for dataset with 8 shards"


def _paste_and_vote(slack, text, label, user, channel="C0TRAIN"):
    before = len(slack.fake.posts())
    msg = payloads.message(text, channel=channel)
    slack.event(msg)
    answer = slack.fake.wait_for(lambda: slack.fake.posts()[before:])[0]
    slack.idle()
    reply_ts = slack.tracebot.store.recent_diagnoses()[0].reply_ts
    button = buttons(answer["blocks"])[label]
    form = payloads.block_action(
        button["action_id"], button["value"], channel=channel, message_ts=reply_ts, thread_ts=msg["ts"], user=user
    )
    assert slack.interaction(form).status == 200
    slack.idle()


def test_votes_clicked_in_slack_export_as_scrubbed_deduplicated_corpus_cases(slack, tmp_path):
    # The same error from two ranks, each pasted with a token and a colleague's mention: one helpful case.
    _paste_and_vote(slack, f"<@U0CAROL> on rank 3: {OOM_LINE}\nHF_TOKEN={HF_TOKEN}", "Helpful", "U0ALICE")
    seven = OOM_LINE.replace("GPU 3", "GPU 7")
    _paste_and_vote(slack, f"<@U0DAVE> on rank 7: {seven}\nHF_TOKEN={HF_TOKEN[::-1]}", "Helpful", "U0BOB")
    other = f"{OOM_LINE}\nbut this was /home/erin/data/loader.py running out of host RAM"
    _paste_and_vote(slack, other, "Not this", "U0BOB")

    cases = feedback_cases(slack.tracebot.store)
    out = tmp_path / "feedback.jsonl"
    write_cases(cases, out)
    exported = out.read_text()
    assert HF_TOKEN not in exported and HF_TOKEN[::-1] not in exported and "U0CAROL" not in exported and "erin" not in exported
    assert "U0ALICE" not in exported and "U0BOB" not in exported  # who voted is not exported either
    loaded = {c.id: c for c in load_cases(out)}
    helpful = [c for c in loaded.values() if c.expected == "test-cuda-oom"]
    negatives = [c for c in loaded.values() if c.expected is None]
    assert len(helpful) == 1, "the same masked error voted twice is one case"
    assert [c.not_ok for c in negatives] == [["test-cuda-oom"]]
    assert "out of host RAM" in (negatives[0].text or "")
    assert [c["votes"] for c in cases if c["expected"]] == [2]


def test_kb_export_feedback_writes_the_cases_from_the_command_line(slack, tmp_path, capsys):
    _paste_and_vote(slack, OOM_LINE, "Helpful", "U0ALICE")
    out = tmp_path / "cases.jsonl"
    assert main(["kb", "export-feedback", "--db", str(slack.config.db_path), "--out", str(out)]) == 0
    assert "1 helpful, 0 'not this'" in capsys.readouterr().out
    assert json.loads(out.read_text())["expected"] == "test-cuda-oom"


def test_exported_votes_are_readable_by_their_owner_alone(slack, tmp_path):
    # The votes' texts come from DMs and private channels too: the store keeps them 0600, and an export
    # written with the umask (0644) let every account on the bot's host read them.
    _paste_and_vote(slack, OOM_LINE, "Helpful", "U0ALICE")
    out = tmp_path / "exports" / "feedback.jsonl"
    before = os.umask(0o022)
    try:
        write_cases(feedback_cases(slack.tracebot.store), out)
    finally:
        os.umask(before)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert json.loads(out.read_text())["expected"] == "test-cuda-oom"


def test_export_feedback_from_a_database_that_is_not_there_says_so_and_creates_nothing(tmp_path, capsys):
    # A mistyped --db (or a shell without the service's TRACEBOT_DB) made an empty database, and its
    # folder, and wrote "0 case(s)": as if nobody had ever voted.
    db = tmp_path / "var" / "tracebt.sqlite3"
    out = tmp_path / "cases.jsonl"
    assert main(["kb", "export-feedback", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"no tracebot database at {db}" in err and "TRACEBOT_DB" in err
    assert not db.parent.exists() and not out.exists()


def test_unanswered_errors_are_grouped_by_masked_signature_with_counts_and_channels(slack, capsys):
    slack.event(payloads.message(UNKNOWN.format(n=11), channel="C0TRAIN"))
    slack.event(payloads.message(UNKNOWN.format(n=42), channel="C0INFRA"))
    slack.event(payloads.message(f"{UNKNOWN.format(n=3)}\ntoken {HF_TOKEN}", channel="C0TRAIN"))
    slack.event(payloads.message("RuntimeError: checkpoint directory vanished mid-save"))
    slack.event(payloads.message("anyone up for lunch? the build failed again lol"))
    slack.event(payloads.message(OOM_LINE))  # answered: not a gap
    slack.fake.wait_for(lambda: slack.fake.posts())
    slack.idle()

    gaps = unanswered(slack.tracebot.store)
    assert [(g.count, g.channels) for g in gaps] == [(3, ["C0INFRA", "C0TRAIN"]), (1, ["C0TRAIN"])]
    assert gaps[0].key == "valueerror: shard index <n> out of range for dataset with <n> shards"
    assert HF_TOKEN not in gaps[0].excerpt
    assert gaps[0].first_seen <= gaps[0].last_seen

    capsys.readouterr()
    assert main(["stats", "--unanswered", "--db", str(slack.config.db_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[0] == "3x" and "shard index" in lines[1] and "C0INFRA, C0TRAIN" in lines[2]


def test_app_home_shows_maintainers_the_gaps_and_the_entries_people_reject(slack, capsys):
    for user in ("U0ALICE", "U0BOB", "U0CAROL"):
        _paste_and_vote(slack, OOM_LINE, "Not this", user)
    slack.event(payloads.message(UNKNOWN.format(n=1)))
    slack.idle()

    slack.event(payloads.home_opened("U0ADMIN"))
    admin_view = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[0].params["view"]
    shown = texts(admin_view["blocks"])
    assert "`test-cuda-oom`: 0% helpful (3 not this of 3 votes)" in shown
    assert "*1×* `valueerror: shard index &lt;n&gt; out of range" in shown  # as Slack escapes it

    slack.event(payloads.home_opened("U0ALICE"))
    slack.fake.wait_for(lambda: len(slack.fake.calls_to("views.publish")) == 2)
    user_view = slack.fake.calls_to("views.publish")[1].params["view"]
    assert "For maintainers" not in texts(user_view["blocks"]) and "shard index" not in texts(user_view["blocks"])

    assert main(["stats", "--db", str(slack.config.db_path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("test-cuda-oom"))
    assert row.split()[1:5] == ["3", "0", "3", "0%"] and row.endswith("! below threshold")
