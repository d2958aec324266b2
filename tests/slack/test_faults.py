"""Fault injection: every message tracebot accepts ends in a posted answer or a posted, explained failure,
and ``wait_idle`` always returns.

The real Bolt app over signed HTTP, the fake Slack Web API, and a real SQLite database made to fail the
ways production databases do: write-locked by another connection, read-only, deleted under the bot, on
a full filesystem (a small tmpfs). The job pool is saturated with work the test holds, and a flooded
channel shares the bot with a quiet one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import Slack, make_config, running_app
from tests.slack.test_rate_limit import T0, HandClockLimiter
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE
from tracebot.plugin_api import Command, CommandContext, hookimpl
from tracebot.result import Result
from tracebot.service.jobs import JobPool
from tracebot.slack.app import make_client
from tracebot.slack.inbound import from_message
from tracebot.store import Store, Work
from tracebot.store import owner as owners

FAST_FAIL_S = 0.2  # the store's busy timeout in these tests: a locked database fails quickly


class FailedJobPlugin:
    """``/trace failedjob``: a trace that works and finds the job failed."""

    @hookimpl
    def register_commands(self) -> list[Command]:
        def run(ctx: CommandContext) -> Result:
            return Result(title="job 9", summary="job 9 FAILED: exit code 1 on node 3", status="error")

        return [Command(name="failedjob", usage="/trace failedjob", help="(tests)", parse=lambda w: {}, run=run)]


@pytest.fixture
def app(start_app, plugin_host) -> Iterator[Any]:
    """Start the app on a given store and job pool: ``app(store=..., jobs=...)``."""
    host, _slow = plugin_host
    failed = FailedJobPlugin()
    host.register(failed, name="test-failedjob")
    yield start_app
    host.unregister(failed)


def answered(slack: Slack, channel: str) -> list[dict[str, Any]]:
    """Diagnoses tracebot posted in ``channel`` (in the pasted messages' threads)."""
    return [p for p in slack.fake.posts(channel) if "Test: CUDA out of memory" in texts(p["blocks"])]


def home_text(slack: Slack, user: str = "U0ADMIN") -> str:
    before = len(slack.fake.calls_to("views.publish"))
    slack.event(payloads.home_opened(user=user))
    views = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish")[before:])
    return texts(views[-1].params["view"]["blocks"])


def paste_in(slack: Slack, channels: list[str]) -> list[dict[str, Any]]:
    messages = [payloads.message(f"[rank{i}]: {OOM_LINE}", channel=c) for i, c in enumerate(channels)]
    for m in messages:
        assert slack.event(m).status == 200
    return messages


def assert_each_answered_once_in_its_thread(slack: Slack, messages: list[dict[str, Any]]) -> None:
    slack.idle()
    for m in messages:
        replies = [p for p in answered(slack, m["channel"]) if p.get("thread_ts") == m["ts"]]
        assert len(replies) == 1, f"{m['channel']}/{m['ts']} got {len(replies)} answers"


# -- storage faults -----------------------------------------------------------------------------------


def test_a_paste_is_answered_while_another_connection_holds_the_write_lock(app, tmp_path):
    db = tmp_path / "locked.sqlite3"
    slack = app(store=Store(db, timeout_s=FAST_FAIL_S))
    other = sqlite3.connect(db, timeout=FAST_FAIL_S, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer (a second bot process, a migration) holds the lock
    try:
        locked = paste_in(slack, ["C0LOCK", "C0LOCK2"])
        assert_each_answered_once_in_its_thread(slack, locked)
        shown = home_text(slack)
        assert "Storage errors" in shown and str(db) in shown and "locked" in shown
        shown = home_text(slack, "U0ALICE")  # not an admin: that there is a problem, not the database's path
        assert "storage has a problem (answers are still posted); admins see the details" in shown
        assert "Storage errors" not in shown and str(db) not in shown and "locked" not in shown
    finally:
        other.execute("ROLLBACK")
        other.close()
    later = paste_in(slack, ["C0LOCK"])
    assert_each_answered_once_in_its_thread(slack, later)
    assert [d.message_ts for d in slack.tracebot.store.recent_diagnoses(limit=1)] == [later[0]["ts"]]


def test_a_trace_help_while_the_database_is_locked_is_acked_in_time_and_answered_through_its_response_url(
    app, tmp_path, fake_slack
):
    db = tmp_path / "locked.sqlite3"
    slack = app(store=Store(db, timeout_s=60))  # the audit log's write waits for the lock, past Slack's 3 s
    other = sqlite3.connect(db, timeout=FAST_FAIL_S, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        ack = slack.command("help", response_url=f"{fake_slack.base}/response/T0001/1/abc")
    finally:
        other.execute("ROLLBACK")
        other.close()
    # A late ack is a 404 to Slack: the user reads "dispatch_failed" and the help never comes.
    assert ack.status == 200 and ack.body == ""
    reply = fake_slack.wait_for(lambda: fake_slack.calls_to("response_url"))[0].params
    assert reply["response_type"] == "ephemeral"
    assert "/trace diagnose" in texts(reply["blocks"])
    slack.idle()
    assert slack.fake.posts() == [] and len(fake_slack.calls_to("response_url")) == 1


def test_a_trace_that_fails_tells_the_caller_in_its_ack_or_after_it_through_its_response_url(
    slack_app_failing_audit,
):
    slack, fail_now, fail_later = slack_app_failing_audit
    response_url = f"{slack.fake.base}/response/T0001/1/abc"
    fail_now.set()  # fails at once: the apology is the ack itself (Slack showed "dispatch_failed" for a 500)
    quick = slack.command("help", response_url=response_url)
    assert quick.status == 200 and "Sorry, `/trace` failed (RuntimeError)" in quick.json()["text"]
    fail_now.clear()
    late = slack.command("help", response_url=response_url)  # fails once Slack has had its empty ack
    fail_later.set()
    assert late.status == 200 and late.body == ""
    said = slack.fake.wait_for(lambda: slack.fake.calls_to("response_url"))[0].params
    assert "Sorry, `/trace` failed (RuntimeError)" in said["text"] and said["response_type"] == "ephemeral"


@pytest.fixture
def slack_app_failing_audit(app, monkeypatch) -> tuple[Slack, threading.Event, threading.Event]:
    """The app whose audit log fails: at once while ``fail_now`` is set, else once ``fail_later`` is."""
    slack = app()
    fail_now, fail_later = threading.Event(), threading.Event()

    def broken(*_args: Any, **_kw: Any) -> None:
        if not fail_now.is_set():
            fail_later.wait(timeout=60)
        raise RuntimeError("audit bug")

    monkeypatch.setattr(slack.tracebot, "audit", broken)
    return slack, fail_now, fail_later


def test_an_answer_slack_does_not_confirm_in_time_is_not_called_a_failed_diagnosis(app, tmp_path, fake_slack, kb_dir):
    client = make_client(make_config(tmp_path, fake_slack, kb_dir))
    client.timeout = 1  # the bot's wait for Slack's reply to a post; Slack's reply to the answer comes later
    slack = app(client=client)
    late = fake_slack.hold("chat.postMessage", first=1)
    mention = payloads.mention(f"学習中にこのエラーで落ちました。どうすればいいですか？\n{OOM_LINE}")
    slack.event(mention)
    said = fake_slack.wait_for(lambda: fake_slack.posts())[0]
    late.release()  # Slack did post the answer: its reply came after the bot stopped waiting
    answer = fake_slack.wait_for(lambda: len(fake_slack.posts()) == 2 and fake_slack.posts()[1])
    assert said["thread_ts"] == answer["thread_ts"] == mention["ts"]
    assert "テスト: CUDA のメモリ不足" in answer["text"]
    text = said["text"]
    assert "Slack から回答の投稿の確認がありませんでした (TimeoutError)" in text, text
    assert "診断できませんでした" not in text and "could not diagnose" not in text


def test_a_shared_file_whose_look_up_times_out_is_named_and_the_question_still_answered(app, tmp_path, fake_slack, kb_dir):
    client = make_client(make_config(tmp_path, fake_slack, kb_dir))
    client.timeout = 1  # files.info's reply never comes within it
    slack = app(client=client)
    stuck = fake_slack.hold("files.info", first=1)
    event = payloads.mention(OOM_LINE)
    event["files"] = [{"id": "F0SLOW", "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": ""}]
    slack.event(event)
    post = fake_slack.wait_for(lambda: fake_slack.posts())[0]
    stuck.release()
    shown = texts(post["blocks"])
    assert "Test: CUDA out of memory" in shown
    assert "`F0SLOW`: could not be read (Slack did not answer: TimeoutError)" in shown, shown


def test_pastes_are_answered_when_the_database_turns_read_only(app, tmp_path):
    slack = app(store=Store(tmp_path / "ro.sqlite3", timeout_s=FAST_FAIL_S))
    # SQLite's own read-only switch on the bot's connection: every write now fails with SQLITE_READONLY,
    # as on a filesystem remounted read-only (root ignores file modes, and a busy tmpfs cannot be remounted).
    slack.tracebot.store.db.execute("PRAGMA query_only = ON")
    messages = paste_in(slack, [f"C0RO{i}" for i in range(5)])
    assert_each_answered_once_in_its_thread(slack, messages)
    shown = home_text(slack)
    assert "ro.sqlite3" in shown and "readonly" in shown and "recording a diagnosis" in shown


def test_a_database_deleted_under_the_bot_is_reported_and_later_pastes_are_recorded_again(app, tmp_path):
    db = tmp_path / "gone.sqlite3"
    slack = app(store=Store(db, timeout_s=FAST_FAIL_S))
    assert_each_answered_once_in_its_thread(slack, paste_in(slack, ["C0DEL"]))
    db.unlink()
    after = paste_in(slack, ["C0DEL", "C0DEL2"])
    assert_each_answered_once_in_its_thread(slack, after)
    shown = home_text(slack)
    assert "gone.sqlite3" in shown and "was deleted while tracebot was running" in shown
    assert db.exists(), "a new database took its place"
    recorded = {d.message_ts for d in Store(db).recent_diagnoses(limit=10)}
    assert after[1]["ts"] in recorded, "records after the error reach the new file"


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root mounts one); ``fill()`` it to the last byte with ``filler``."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI and the dev machine run as root)")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def fill(directory: Path) -> None:
    with (directory / "filler").open("wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass  # ENOSPC: the disk is full


def test_on_a_full_disk_every_paste_is_answered_and_every_trace_run_is_finalised(app, full_tmpfs):
    slack = app(store=Store(full_tmpfs / "full.sqlite3", timeout_s=FAST_FAIL_S))
    fill(full_tmpfs)
    messages = paste_in(slack, [f"C0FULL{i}" for i in range(5)])
    assert slack.command("slow 5", channel="C0FULL0").status == 200
    assert_each_answered_once_in_its_thread(slack, messages)
    updates = [u.params["text"] for u in slack.fake.calls_to("chat.update")]
    parent = [t for t in updates if "/trace slow 5" in t]
    assert parent and "running…" not in parent[-1] and "3 of 4 ranks stuck" in parent[-1]
    shown = home_text(slack)
    assert "full.sqlite3" in shown and "disk is full" in shown


# -- trace runs ---------------------------------------------------------------------------------------


def test_a_trace_run_that_crashes_before_its_work_still_finalises_its_parent_message(app, tmp_path, monkeypatch):
    slack = app()

    def permalink_fails(channel: str, ts: str) -> str:
        raise RuntimeError("Slack said internal_error")

    monkeypatch.setattr(slack.tracebot.runs.outbox, "permalink", permalink_fails)
    assert slack.command("slow 6").status == 200
    slack.idle()
    parent = [u.params["text"] for u in slack.fake.calls_to("chat.update") if "/trace slow 6" in u.params["text"]]
    assert parent and ":x:" in parent[-1] and "RuntimeError" in parent[-1], "never left saying running…"


def test_a_trace_that_finds_a_failed_job_says_the_trace_finished_and_the_job_failed(app):
    slack = app()
    assert slack.command("failedjob").status == 200
    slack.idle()
    progress_ts = slack.fake.calls_to("chat.postMessage")[1].response["ts"]
    line = [u.params["text"] for u in slack.fake.calls_to("chat.update") if u.params["ts"] == progress_ts]
    assert "trace finished" in line[-1] and "failed" not in line[-1]
    parent = [u.params["text"] for u in slack.fake.calls_to("chat.update") if "/trace failedjob" in u.params["text"]]
    assert ":x: job 9 FAILED" in parent[-1], "the result's own status says what the job did"


def test_the_same_trace_from_another_channel_gets_the_result_there_not_a_link_it_cannot_open(app):
    slack = app()
    slack.slow.release.clear()
    try:
        assert slack.command("slow 88", channel="C0PRIVATE", user="U0CAROL").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        here = slack.command("slow 88", channel="C0PRIVATE", user="U0ALICE").json()
        elsewhere = slack.command("slow 88", channel="C0PUBLIC", user="U0BOB").json()
    finally:
        slack.slow.release.set()
    slack.idle()
    assert "already running" in here["text"] and "archives/C0PRIVATE" in here["text"]
    assert "C0PRIVATE" not in elsewhere["text"] and "post its result here" in elsewhere["text"]
    assert slack.slow.runs == [88], "the work ran once"
    public = slack.fake.posts("C0PUBLIC")
    assert any("3 of 4 ranks stuck" in texts(p["blocks"]) for p in public), "Bob got the result where he asked"


def test_a_trace_running_with_someone_elses_rights_is_not_handed_to_another_channel(app):
    """Alice's trace ran with Alice's rights (her job, her logs); Bob, who maps to no cluster user, asking the
    same from another channel gets a run of his own, never her result."""
    slack = app()
    slack.slow.release.clear()
    try:
        assert slack.command("slow 88", channel="C0PRIVATE", user="U0ALICE").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        elsewhere = slack.command("slow 88", channel="C0PUBLIC", user="U0BOB")
    finally:
        slack.slow.release.set()
    slack.idle()
    assert "already running" not in elsewhere.body
    assert slack.slow.runs == [88, 88], "Bob's request ran with his own rights"
    assert any("3 of 4 ranks stuck" in texts(p["blocks"]) for p in slack.fake.posts("C0PUBLIC"))


# -- saturation and floods ----------------------------------------------------------------------------


def hold_lane(slack: Slack, channel: str) -> threading.Event:
    """Occupy ``channel``'s lane with work the test releases (an answer stuck on a slow upload)."""
    gate = threading.Event()
    slack.tracebot.jobs.submit(lambda job: gate.wait(30), label="held", lane=channel)
    return gate


def test_a_saturated_channel_sheds_its_own_pastes_says_so_and_the_retries_get_through(app):
    slack = app(jobs=JobPool(workers=2, max_pending=50, max_per_lane=3))
    gate = hold_lane(slack, "C0FLOOD")
    try:
        flood = [payloads.message(f"[rank{i}]: {OOM_LINE}", channel="C0FLOOD") for i in range(10)]
        ids = [f"Ev0FLOOD{i:02d}" for i in range(10)]
        for m, ev in zip(flood, ids, strict=True):
            assert slack.event(m, event_id=ev).status == 200
        quiet = paste_in(slack, ["C0QUIET"])
        slack.fake.wait_for(lambda: answered(slack, "C0QUIET"))
        assert not answered(slack, "C0FLOOD"), "the flooded channel is still held"
    finally:
        gate.set()
    slack.idle()
    notices = [p for p in slack.fake.posts("C0FLOOD") if "skipped this one" in p["text"]]
    assert len(notices) == 1, "the channel is told once that tracebot is shedding load"
    first_pass = {p["thread_ts"] for p in answered(slack, "C0FLOOD")}
    assert len(first_pass) == 2, "two fit in the channel's queue beside the held work"
    # Slack retries the rest (same event ids): their claims were released, so they get through.
    for m, ev in zip(flood, ids, strict=True):
        if m["ts"] not in first_pass:
            assert slack.event(m, event_id=ev, headers={"X-Slack-Retry-Num": "1"}).status == 200
            slack.idle()
    assert_each_answered_once_in_its_thread(slack, flood + quiet)


def test_duplicate_deliveries_under_saturation_are_answered_exactly_once(app):
    slack = app(jobs=JobPool(workers=2, max_pending=50, max_per_lane=4))
    gate = hold_lane(slack, "C0DUP")
    messages = [payloads.message(f"[rank{i}]: {NCCL_LINE} {OOM_LINE}", channel="C0DUP") for i in range(12)]
    deliveries = [(m, f"Ev0DUP{i:02d}") for i, m in enumerate(messages) for _ in range(2)]
    try:
        with ThreadPoolExecutor(max_workers=8) as senders:
            statuses = list(senders.map(lambda d: slack.event(d[0], event_id=d[1]).status, deliveries))
        assert statuses == [200] * len(deliveries)
    finally:
        gate.set()
    slack.idle()
    for _retry in range(len(messages)):  # retries, twice each, until every message got through
        missing = [
            (m, ev)
            for m, ev in deliveries[::2]
            if not [p for p in answered(slack, "C0DUP") if p.get("thread_ts") == m["ts"]]
        ]
        if not missing:
            break
        with ThreadPoolExecutor(max_workers=8) as senders:
            list(senders.map(lambda d: slack.event(d[0], event_id=d[1]).status, missing * 2))
        slack.idle()
    assert_each_answered_once_in_its_thread(slack, messages)


def test_a_flooded_channel_queues_its_own_pastes_while_other_channels_are_answered_at_once(
    tmp_path, fake_slack, kb_dir, plugin_host, monkeypatch
):
    monkeypatch.delenv("TRACEBOT_CHANNEL_RATE", raising=False)
    monkeypatch.delenv("TRACEBOT_CHANNEL_BURST", raising=False)
    limiters: list[HandClockLimiter] = []
    monkeypatch.setattr(
        "tracebot.slack.app.RateLimiter", lambda rate, burst: limiters.append(HandClockLimiter(rate, burst)) or limiters[-1]
    )
    config = make_config(tmp_path, fake_slack, kb_dir)
    with running_app(config, fake_slack, host=plugin_host[0]) as slack:
        [limiter] = limiters
        flood = paste_in(slack, ["C0FLOOD"] * 40)
        fake_slack.wait_for(lambda: len(answered(slack, "C0FLOOD")) == 3)  # Slack's burst, at once
        others = paste_in(slack, ["C0A", "C0B", "C0C"])
        for m in others:
            fake_slack.wait_for(lambda m=m: answered(slack, m["channel"]))
        assert len(answered(slack, "C0FLOOD")) == 3 and slack.tracebot.jobs.waiting("C0FLOOD") == 37
        for n in range(4, 41):  # one a second in the flooded channel
            limiter.now += 1.0
            fake_slack.wait_for(lambda n=n: len(answered(slack, "C0FLOOD")) == n)
        assert slack.tracebot.wait_idle(10)
        assert_each_answered_once_in_its_thread(slack, flood + others)
    assert all(limiter.schedule(c) == [T0] for c in ("C0A", "C0B", "C0C")), "nobody waited on the flood"
    assert limiter.slept == [], "no worker slept on the flooded channel's rate slot"


def test_a_helpful_click_when_the_database_turns_read_only_is_still_thanked_and_the_failure_shown(app, tmp_path):
    slack = app(store=Store(tmp_path / "ro.sqlite3", timeout_s=FAST_FAIL_S))
    (m,) = paste_in(slack, ["C0RO"])
    assert_each_answered_once_in_its_thread(slack, [m])
    (record,) = slack.tracebot.store.recent_diagnoses()
    slack.tracebot.store.db.execute("PRAGMA query_only = ON")
    value = f"{record.id}:test-cuda-oom:en"
    click = payloads.block_action("tracebot_helpful", value, channel="C0RO", message_ts=record.reply_ts, thread_ts=m["ts"])
    assert slack.interaction(click).status == 200
    slack.idle()
    (thanks,) = slack.fake.calls_to("chat.postEphemeral")
    assert thanks.params["user"] == "U0ALICE" and thanks.params["thread_ts"] == m["ts"]
    assert "could not record that" in thanks.params["text"]
    shown = home_text(slack)
    assert "readonly" in shown and "recording feedback" in shown


def test_a_trace_whose_parent_message_slack_refuses_tells_the_caller_instead_of_vanishing(app):
    slack = app()
    slack.fake.fail_next("chat.postMessage", status=200)  # ok: false (as for restricted_action), not retried
    resp = slack.command("slow 4411")
    assert resp.status == 200 and not resp.body, "queued: the parent message would be the visible answer"
    slack.idle()
    (told,) = slack.fake.calls_to("chat.postEphemeral")
    assert told.params["user"] == "U0ALICE" and told.params["channel"] == "C0TRAIN"
    assert "/trace slow 4411" in told.params["text"] and "could not post" in told.params["text"]


# -- work a killed process left (the durable inbox) ------------------------------------------------------


def _left_by_a_killed_process(store: Store, kind: str, payload: dict[str, Any], thread: tuple[str, str] | None = None) -> int:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    dead = owners.token(proc.pid)
    proc.kill()
    proc.wait(timeout=10)
    work_id = store.add_work(Work(kind, payload, dead))
    if thread is not None:
        store.set_work_thread(work_id, json.dumps(list(thread)))
    return work_id


def test_a_trace_run_cut_short_by_a_restart_is_not_run_again_and_its_parent_and_thread_say_why(app):
    slack = app()
    _left_by_a_killed_process(slack.tracebot.store, "trace", {
        "text": "slow 7", "label": "slow 7", "command": "slow", "channel": "C0TRAIN", "user": "U0ALICE",
        "thread_ts": None,
    }, thread=("C0TRAIN", "1763000000.000100"))
    assert slack.tracebot.resume() == 1
    slack.idle()
    note = [p["text"] for p in slack.fake.posts("C0TRAIN") if p.get("thread_ts") == "1763000000.000100"]
    assert len(note) == 1 and "did not run it again" in note[0] and "Run it again" in note[0]
    updates = [c.params for c in slack.fake.calls_to("chat.update") if c.params.get("ts") == "1763000000.000100"]
    assert updates and "interrupted: tracebot restarted" in updates[-1]["text"]
    assert slack.slow.runs == [], "py-spy-like work is not re-run behind the caller's back"
    assert slack.tracebot.store.count("inbox") == 0


def test_someone_following_a_run_from_another_channel_is_told_by_a_restart_that_cuts_it_short(app):
    """Bob asked from C0PUBLIC for a run already going for Carol, and was promised its result. His inbox row
    was written and deleted at once, so a restart before the result left him waiting for good; it now stays
    until the result is posted to him, and a restart finds it and tells him."""
    slack = app()
    store = slack.tracebot.store
    slack.slow.release.clear()
    try:
        assert slack.command("slow 88", channel="C0PRIVATE", user="U0CAROL").body == ""
        slack.fake.wait_for(lambda: slack.fake.calls_to("chat.getPermalink"))
        assert "post its result here" in slack.command("slow 88", channel="C0PUBLIC", user="U0BOB").json()["text"]
        rows = store.db.execute("SELECT kind, payload FROM inbox ORDER BY id").fetchall()
        payloads_left = [json.loads(payload) for _kind, payload in rows]
        assert [(p["channel"], p["user"]) for p in payloads_left] == [("C0PRIVATE", "U0CAROL"), ("C0PUBLIC", "U0BOB")]
    finally:
        slack.slow.release.set()
    slack.idle()
    assert store.count("inbox") == 0, "each row goes once its caller has the result"
    # What a kill -9 during the run would have left for the next start: Bob's row, as it was written.
    _left_by_a_killed_process(store, "trace", payloads_left[1])
    assert slack.tracebot.resume() == 1
    slack.idle()
    told = [p["text"] for p in slack.fake.posts("C0PUBLIC") if "tracebot restarted" in p["text"]]
    told += [c.params["text"] for c in slack.fake.calls_to("chat.postEphemeral") if "tracebot restarted" in c.params["text"]]
    assert told and "/trace slow 88" in told[0], told
    assert store.count("inbox") == 0


def test_a_trace_diagnose_cut_short_by_a_restart_is_answered_again_in_its_thread(app):
    slack = app()
    _left_by_a_killed_process(slack.tracebot.store, "trace", {
        "text": f"diagnose {OOM_LINE}", "label": "diagnose", "command": "diagnose", "channel": "C0TRAIN",
        "user": "U0ALICE", "thread_ts": None,
    }, thread=("C0TRAIN", "1763000000.000200"))
    assert slack.tracebot.resume() == 1
    answers = slack.fake.wait_for(lambda: [p for p in answered(slack, "C0TRAIN") if p.get("thread_ts") == "1763000000.000200"])
    slack.idle()
    assert len(answers) == 1
    updates = [c.params["text"] for c in slack.fake.calls_to("chat.update") if c.params.get("ts") == "1763000000.000200"]
    assert any("answered again below" in u for u in updates)


def test_a_restart_on_a_locked_database_starts_and_answers_new_pastes(app, tmp_path):
    db = tmp_path / "locked.sqlite3"
    slack = app(store=Store(db, timeout_s=FAST_FAIL_S))
    left = payloads.message(OOM_LINE, channel="C0LEFT")
    _left_by_a_killed_process(slack.tracebot.store, "auto", {"msg": asdict(from_message(left))})
    other = sqlite3.connect(db, timeout=FAST_FAIL_S, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert slack.tracebot.resume() == 0  # the store is a record, not a gate: nothing taken, nothing broken
        assert "reading work left by a stopped process" in home_text(slack)
        assert_each_answered_once_in_its_thread(slack, paste_in(slack, ["C0LOCK"]))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert slack.tracebot.resume() == 1, "unlocked, the next start takes the work over"
    assert_each_answered_once_in_its_thread(slack, [left])


def test_a_restart_whose_inbox_holds_an_unreadable_row_starts_and_answers_the_others(app):
    # a row edited by hand, or cut short on a disk that filled: its payload is not JSON. It crashed resume()
    # (JSONDecodeError is no StoreError), so `tracebot serve` did not start, and a restart-on-failure unit
    # crashed on it again at every start, the good rows never answered
    slack = app()
    first = payloads.message(OOM_LINE, channel="C0LEFT")
    _left_by_a_killed_process(slack.tracebot.store, "auto", {"msg": asdict(from_message(first))})
    bad = _left_by_a_killed_process(slack.tracebot.store, "auto", {"msg": {}})
    slack.tracebot.store.db.execute("UPDATE inbox SET payload = ? WHERE id = ?", ['{"msg": {"channel": "C0', bad])
    last = payloads.message(f"[rank1]: {OOM_LINE}", channel="C0LEFT")
    _left_by_a_killed_process(slack.tracebot.store, "auto", {"msg": asdict(from_message(last))})
    assert slack.tracebot.resume() == 2
    assert_each_answered_once_in_its_thread(slack, [first, last])
    assert slack.tracebot.store.count("inbox") == 0, "the unreadable row is not taken over again at every start"



def test_a_trace_row_edited_to_say_diagnose_does_not_replay_another_command(app):
    # only /trace diagnose is answered again after a restart; the check read the row's "command" field but
    # ran whatever its text planned, so a row saying diagnose with the text of a plugin run re-ran the plugin
    slack = app()
    _left_by_a_killed_process(slack.tracebot.store, "trace", {
        "text": "slow 7", "label": "slow 7", "command": "diagnose", "channel": "C0TRAIN", "user": "U0ALICE",
        "thread_ts": None,
    }, thread=("C0TRAIN", "1763000000.000300"))
    assert slack.tracebot.resume() == 1
    slack.idle()
    assert slack.slow.runs == [], "a plugin run is never re-run behind the caller's back"
    note = [p["text"] for p in slack.fake.posts("C0TRAIN") if p.get("thread_ts") == "1763000000.000300"]
    assert len(note) == 1 and "did not run it again" in note[0]


def test_a_message_left_by_another_version_of_tracebot_is_still_answered(app):
    # the payload is not versioned: a row written by a newer tracebot (a field this one lacks, as after a
    # rollback) made Inbound(**row) raise TypeError, and the message was dropped with nothing said in the thread
    slack = app()
    left = payloads.message(OOM_LINE, channel="C0LEFT")
    msg = {**asdict(from_message(left)), "edited_at": "1763000000.000900"}
    msg["files"] = [{"name": "log.txt", "url": None, "size": 3, "mimetype": "text/plain", "filetype": "text",
                     "checksum": "abc"}]
    _left_by_a_killed_process(slack.tracebot.store, "direct", {"msg": msg, "source": "mention"})
    assert slack.tracebot.resume() == 1
    replies = slack.fake.wait_for(lambda: [p for p in slack.fake.posts("C0LEFT") if p.get("thread_ts") == left["ts"]])
    slack.idle()
    assert len(replies) == 1 and "Test: CUDA out of memory" in texts(replies[0]["blocks"])



def test_the_dropped_note_says_how_long_work_may_wait_in_words_that_are_true(app):
    # TRACEBOT_REPLAY_MAX_AGE_S under a minute was shown as "it waited longer than 0 minutes"
    slack = app()
    slack.tracebot.config.replay_max_age_s = 20.0
    left = payloads.mention(OOM_LINE, channel="C0LEFT")
    work_id = _left_by_a_killed_process(slack.tracebot.store, "direct", {"msg": asdict(from_message(left)), "source": "mention"})
    slack.tracebot.store.db.execute("UPDATE inbox SET created_at = created_at - 60 WHERE id = ?", [work_id])
    assert slack.tracebot.resume() == 1
    note = slack.fake.wait_for(lambda: [p["text"] for p in slack.fake.posts("C0LEFT") if p.get("thread_ts") == left["ts"]])
    assert "restarted and dropped your message" in note[0] and "longer than 20 seconds" in note[0], note[0]



def test_a_trace_when_tracebot_is_too_busy_to_queue_it_tells_the_caller_so(app):
    # mend11's TraceRuns._submit returns the run's (job, created) or the "busy" reply, both tuples: start() took
    # the reply for a queued job and returned None, so a /trace refused under load acked with nothing at all
    slack = app()
    slack.tracebot.runs.pool = JobPool(workers=1, max_pending=0)  # every run refused: busy
    resp = slack.command("slow 7")
    assert resp.status == 200 and "tracebot is busy" in json.dumps(resp.json()), resp.body
    mention = payloads.mention("slow 8", channel="C0TRAIN")
    slack.event(mention)
    slack.idle()
    replies = [p["text"] for p in slack.fake.posts("C0TRAIN") if p.get("thread_ts") == mention["ts"]]
    assert len(replies) == 1 and "tracebot is busy" in replies[0], replies
    assert slack.slow.runs == [] and slack.tracebot.store.count("inbox") == 0


def test_a_trace_diagnose_that_cannot_be_queued_after_a_restart_is_not_said_to_reach_outside_tracebot(app):
    # /trace diagnose is answered again after a restart; when the run pool was full its note said it "reaches
    # outside tracebot (SLURM, AWS or a job's processes)", which diagnose does not: the caller is told why
    slack = app()
    slack.tracebot.runs.pool = JobPool(workers=1, max_pending=0)  # every run refused: busy
    _left_by_a_killed_process(slack.tracebot.store, "trace", {
        "text": f"diagnose {OOM_LINE}", "label": "diagnose", "command": "diagnose", "channel": "C0TRAIN",
        "user": "U0ALICE", "thread_ts": None,
    }, thread=("C0TRAIN", "1763000000.000400"))
    assert slack.tracebot.resume() == 1
    slack.idle()
    note = [p["text"] for p in slack.fake.posts("C0TRAIN") if p.get("thread_ts") == "1763000000.000400"]
    assert len(note) == 1 and "SLURM" not in note[0] and "busy" in note[0] and "Run it again" in note[0], note
    assert slack.tracebot.store.count("inbox") == 0

def test_work_of_a_kind_this_version_does_not_know_is_dropped_not_answered_as_a_mention(app):
    # a row written by a newer tracebot (a kind such as "shortcut" this version lacks) was replayed as a
    # mention: an answer posted unasked into a thread, with whatever the row's "source" said
    slack = app()
    left = payloads.message(OOM_LINE, channel="C0LEFT")
    _left_by_a_killed_process(slack.tracebot.store, "shortcut", {"msg": asdict(from_message(left)), "source": "x"})
    good = payloads.message(f"[rank1]: {OOM_LINE}", channel="C0LEFT")
    _left_by_a_killed_process(slack.tracebot.store, "auto", {"msg": asdict(from_message(good))})
    assert slack.tracebot.resume() == 2
    assert_each_answered_once_in_its_thread(slack, [good])
    assert [p for p in slack.fake.posts("C0LEFT") if p.get("thread_ts") == left["ts"]] == []
    assert slack.tracebot.store.count("inbox") == 0
