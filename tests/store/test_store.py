"""The store against real SQLite files (no mocks): it survives restarts and fails loudly."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time

import pytest

from tracebot.result import Match
from tracebot.store import Store, StoreError
from tracebot.store.migrations import MIGRATIONS
from tracebot.store.stats import entry_stats, most_helpful, not_this_feedback


def _match(entry_id: str, score: float = 90.0, line: str = "NCCL watchdog timeout") -> Match:
    return Match(entry_id=entry_id, title=entry_id, score=score, confident=score >= 75, line=line, line_no=3)


def test_a_new_database_is_created_in_wal_mode_with_every_migration_applied(tmp_path):
    store = Store(tmp_path / "sub" / "t.sqlite3")
    assert store.db.journal_mode == "wal"
    applied = [r["name"] for r in store.db["_migrations"].rows]
    assert applied == [name for name, _ in MIGRATIONS]
    assert {"events", "diagnoses", "feedback", "channel_settings", "trace_runs"} <= set(
        store.db.table_names()
    )


def test_everything_recorded_survives_a_restart(tmp_path):
    path = tmp_path / "t.sqlite3"
    store = Store(path)
    assert store.claim_event("Ev1", "msg:C1:1.0")
    diag_id = store.record_diagnosis(
        channel="C1",
        thread_ts="1.0",
        message_ts="1.0",
        user="U1",
        source="auto",
        matches=[_match("nccl-timeout"), _match("cuda-oom", 60)],
        confident=True,
        reply_ts="2.0",
    )
    store.record_feedback(diagnosis_id=diag_id, entry_id="nccl-timeout", user="U2", helpful=False)
    store.update_channel_settings("C1", updated_by="UADMIN", auto_reply=False, threshold=82.5)
    run_id = store.start_trace_run(command="job", args=["123"], dedupe_key="job:123", user="U1", channel="C1")
    store.update_trace_run(run_id, status="ok", summary="3 ranks stuck")
    store.close()

    again = Store(path)
    assert not again.claim_event("msg:C1:1.0"), "an event seen before the restart is still a duplicate"
    record = again.diagnosis(diag_id)
    assert record is not None
    assert [m.entry_id for m in record.matches] == ["nccl-timeout", "cuda-oom"]
    assert record.matches[0].line_no == 3
    settings = again.channel_settings("C1")
    assert (settings.auto_reply, settings.threshold, settings.updated_by) == (False, 82.5, "UADMIN")
    run = again.trace_runs()[0]
    assert (run["status"], run["summary"]) == ("ok", "3 ranks stuck") and run["finished_at"]
    assert not_this_feedback(again)[0]["line"] == "NCCL watchdog timeout"


def test_an_event_is_claimed_once_even_when_many_threads_race_for_it(tmp_path):
    store = Store(tmp_path / "t.sqlite3")
    wins: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        wins.append(store.claim_event("Ev-race", "msg:C1:5.5"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins.count(True) == 1


def test_a_redelivery_under_a_different_event_id_is_still_a_duplicate(tmp_path):
    store = Store(":memory:")
    assert store.claim_event("Ev-A", "msg:C1:7.0")
    assert not store.claim_event("Ev-B", "msg:C1:7.0")


def test_a_corrupt_database_file_gives_a_clear_error(tmp_path):
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="corrupt"):
        Store(path)
    assert path.read_bytes().startswith(b"this is not sqlite"), "the broken file is left for inspection"


def test_a_database_locked_by_another_process_gives_a_clear_error_not_a_lost_write(tmp_path):
    path = tmp_path / "t.sqlite3"
    store = Store(path, timeout_s=0.2)
    other = sqlite3.connect(path)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            store.record_feedback(diagnosis_id=None, entry_id="x", user="U1", helpful=True)
    finally:
        other.rollback()
        other.close()
    store.record_feedback(diagnosis_id=None, entry_id="x", user="U1", helpful=True)
    assert store.count("feedback") == 1


def test_the_earlier_answer_in_a_thread_is_found_only_within_the_window(tmp_path):
    store = Store(":memory:")
    diag_id = store.record_diagnosis(
        channel="C1",
        thread_ts="1.0",
        matches=[_match("cuda-oom")],
        confident=True,
        source="auto",
        reply_ts="1.5",
    )
    assert store.earlier_answer("C1", "1.0", "cuda-oom", within_s=60).id == diag_id
    assert store.earlier_answer("C1", "9.0", "cuda-oom", within_s=60) is None
    assert store.earlier_answer("C1", "1.0", "nccl-timeout", within_s=60) is None
    store.db.execute("UPDATE diagnoses SET created_at = ?", [time.time() - 120])
    assert store.earlier_answer("C1", "1.0", "cuda-oom", within_s=60) is None


def test_stats_count_matches_per_entry_and_the_helpful_rate(tmp_path):
    store = Store(":memory:")
    ids = [
        store.record_diagnosis(channel="C1", matches=[_match("cuda-oom")], confident=True, source="auto")
        for _ in range(3)
    ]
    store.record_diagnosis(channel="C1", matches=[_match("nccl-timeout")], confident=True, source="auto")
    store.record_diagnosis(channel="C1", matches=[], confident=False, source="mention")
    store.record_feedback(diagnosis_id=ids[0], entry_id="cuda-oom", user="U1", helpful=True)
    store.record_feedback(diagnosis_id=ids[1], entry_id="cuda-oom", user="U2", helpful=True)
    store.record_feedback(diagnosis_id=ids[2], entry_id="cuda-oom", user="U3", helpful=False)
    stats = {s.entry_id: s for s in entry_stats(store)}
    assert stats["cuda-oom"].matched == 3 and stats["nccl-timeout"].matched == 1
    assert stats["cuda-oom"].helpful_rate == pytest.approx(2 / 3)
    assert stats["nccl-timeout"].helpful_rate is None
    assert [s.entry_id for s in most_helpful(store)] == ["cuda-oom"]


def test_clicking_feedback_again_replaces_the_earlier_vote():
    store = Store(":memory:")
    diag_id = store.record_diagnosis(
        channel="C1", matches=[_match("cuda-oom")], confident=True, source="auto"
    )
    store.record_feedback(diagnosis_id=diag_id, entry_id="cuda-oom", user="U1", helpful=True)
    store.record_feedback(diagnosis_id=diag_id, entry_id="cuda-oom", user="U1", helpful=False)
    store.record_feedback(diagnosis_id=diag_id, entry_id="cuda-oom", user="U2", helpful=True)
    stats = {s.entry_id: s for s in entry_stats(store)}
    assert (stats["cuda-oom"].helpful, stats["cuda-oom"].not_this) == (1, 1)


def test_events_older_than_a_week_are_forgotten_so_the_table_stays_small(monkeypatch):
    from tracebot.store import db as store_db

    monkeypatch.setattr(store_db, "PRUNE_EVERY", 1)
    store = Store(":memory:")
    assert store.claim_event("Ev-old")
    store.db.execute("UPDATE events SET seen_at = ?", [time.time() - 8 * 24 * 3600])
    assert store.claim_event("Ev-new")
    assert store.count("events") == 1
    assert store.claim_event("Ev-old"), "a week-old event id no longer blocks anything"


def test_a_released_claim_lets_the_redelivery_through(tmp_path):
    store = Store(tmp_path / "t.sqlite3")
    assert store.claim_event("auto:ev:Ev1", "auto:msg:C1:1.0")
    store.release_event("auto:ev:Ev1", "auto:msg:C1:1.0")
    assert store.claim_event("auto:ev:Ev1"), "work that could not be queued must not block Slack's retry"
    assert not store.claim_event("auto:ev:Ev1")


def test_a_database_deleted_under_the_bot_is_an_error_and_later_records_are_kept(tmp_path):
    path = tmp_path / "t.sqlite3"
    store = Store(path)
    store.record_diagnosis(channel="C1", matches=[], confident=False, source="auto")
    path.unlink()
    with pytest.raises(StoreError, match=rf"{path}: the file was deleted while tracebot was running"):
        store.record_diagnosis(channel="C1", matches=[], confident=False, source="auto")
    store.record_diagnosis(channel="C2", matches=[], confident=False, source="auto")
    reopened = Store(path)
    assert [d.channel for d in reopened.recent_diagnoses()] == ["C2"], "records after the error reach the file"


def test_a_database_from_before_the_learning_migration_keeps_its_votes_and_gains_the_new_tables(tmp_path):
    import sqlite_utils

    from tracebot.store.migrations import apply_migrations

    path = tmp_path / "old.sqlite3"
    old = sqlite_utils.Database(sqlite3.connect(path))
    apply_migrations(old, MIGRATIONS[:1])
    old["diagnoses"].insert({"channel": "C1", "entry_ids": '["e"]', "matches": "[]", "created_at": 1.0})
    old["feedback"].insert({"diagnosis_id": 1, "entry_id": "e", "user": "U1", "helpful": 1, "created_at": 1.0})
    old.conn.close()

    store = Store(path)
    assert [s.helpful for s in entry_stats(store)] == [1]
    store.record_unanswered(channel="C1", signature="valueerror: x", exception=None, excerpt="ValueError: x")
    assert store.count("unanswered") == 1


def _private_paste_stored(path) -> Store:
    """A store opened at ``path`` under a usual umask (files 0644, folders 0755), holding a DM's paste."""
    old = os.umask(0o022)
    try:
        store = Store(path)
        store.record_diagnosis(channel="D0ALICE", matches=[_match("cuda-oom")], confident=True, source="auto",
                               text="RuntimeError: alice's private paste")
    finally:
        os.umask(old)
    return store


def _others_bits(folder) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) & 0o077 for p in [folder, *folder.iterdir()]}


def test_a_new_database_and_its_folder_are_readable_by_tracebots_user_alone(tmp_path):
    # it keeps what was pasted in DMs and private channels, and who traced what: on a shared login node
    # another user must not read it (nor its WAL, which holds the latest records)
    _private_paste_stored(tmp_path / "var" / "t.sqlite3")
    folder = tmp_path / "var"
    assert any(p.name.endswith("-wal") for p in folder.iterdir())
    assert _others_bits(folder) == dict.fromkeys(_others_bits(folder), 0)


def test_a_new_database_behind_a_symlink_is_readable_by_tracebots_user_alone(tmp_path):
    # an admin who puts the database on another disk links var/tracebot.sqlite3 to it before the first start:
    # the link exists, so the private file was never made, and SQLite created the target with the umask (0644)
    disk = tmp_path / "data" / "db"
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "t.sqlite3").symlink_to(disk / "t.sqlite3")
    store = _private_paste_stored(tmp_path / "var" / "t.sqlite3")
    assert store.count("diagnoses") == 1 and (disk / "t.sqlite3").is_file()
    assert _others_bits(disk) == dict.fromkeys(_others_bits(disk), 0)


def test_every_folder_made_for_a_new_database_is_tracebots_user_s_alone(tmp_path):
    # only the last folder was made 0700; the ones above it got the umask's mode (0777 under umask 000)
    old = os.umask(0)
    try:
        Store(tmp_path / "srv" / "tracebot" / "t.sqlite3").db.conn.close()
    finally:
        os.umask(old)
    made = [tmp_path / "srv", tmp_path / "srv" / "tracebot"]
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {"srv": "0o700", "tracebot": "0o700"}


def test_a_database_whose_folder_cannot_be_made_is_a_store_error_naming_it(tmp_path):
    # an OSError that reached `tracebot run` as "cannot start the Slack app (auth.test failed): [Errno 20] …",
    # and the console as a traceback
    (tmp_path / "var").write_text("a file where the folder should be")
    with pytest.raises(StoreError, match=r"tracebot database .*/var/t\.sqlite3: cannot create it \(Not a directory"):
        Store(tmp_path / "var" / "t.sqlite3")


def test_a_message_answered_again_is_one_diagnosis_updated_in_place(tmp_path):
    store = Store(":memory:")
    first = store.record_diagnosis(channel="C1", message_ts="1.0", matches=[_match("cuda-oom")], confident=True,
                                   source="auto", reply_ts="1.5")
    again = store.record_diagnosis(channel="C1", message_ts="1.0", matches=[_match("nccl-timeout")], confident=True,
                                   source="auto")
    other = store.record_diagnosis(channel="C2", message_ts="1.0", matches=[_match("cuda-oom")], confident=True,
                                   source="auto")
    assert again == first and other != first
    assert {s.entry_id: s.matched for s in entry_stats(store)} == {"nccl-timeout": 1, "cuda-oom": 1}
    kept = store.diagnosis(first)
    assert kept is not None and kept.reply_ts == "1.5", "the answer it updates is still where it was"
