"""The files an author hands ``kb new --from``, ``kb new --from-thread``, a case's log fixture and
``kb export-feedback --out``: a FIFO, a folder, a JSON that is no thread, a place that cannot be written are
each said in one line with exit 2, never a traceback or a silent wait."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tracebot.cli import main
from tracebot.store import Store


def _within(seconds: float, call: Callable[[], int], fifo: Path) -> int:
    """``call()``'s result, failing the test when it is still waiting (on ``fifo``'s writer) after ``seconds``."""
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    if not done:  # let the reader that waits for a writer go, so the test process can end
        with open(fifo, "w"):
            pass
        worker.join(seconds)
        pytest.fail(f"waited for a writer on {fifo.name}")
    return done[0]


@pytest.mark.parametrize("option", ["--from", "--from-thread"])
def test_kb_new_refuses_a_fifo_at_once_instead_of_waiting_for_a_writer(tmp_path: Path, capsys, option: str):
    fifo = tmp_path / "paste"
    os.mkfifo(fifo)
    args = ["kb", "new", "--knowledge", str(tmp_path / "knowledge"), option, str(fifo)]
    if option == "--from":
        args.insert(2, "my-entry")
    assert _within(10, lambda: main(args), fifo) == 2
    assert f"cannot read {fifo}: not a regular file (a FIFO, socket or device)" in capsys.readouterr().err
    assert not (tmp_path / "knowledge").exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("5", "not a Slack thread: the JSON of conversations.replies"),
        ('{"messages": null}', "not a Slack thread: the JSON of conversations.replies"),
        ('{"messages": [{"ts": "1", "text": "ValueError: shard index 11 out of range"}]}',
         "the thread has no replies to pick as the fix"),
    ],
)
def test_kb_new_from_a_json_that_is_no_thread_or_has_no_reply_says_so(tmp_path: Path, capsys, content: str, said: str):
    thread = tmp_path / "thread.json"
    thread.write_text(content)
    assert main(["kb", "new", "--from-thread", str(thread), "--fix", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_kb_new_from_a_folder_says_it_is_a_folder(tmp_path: Path, capsys):
    assert main(["kb", "new", "my-entry", "--knowledge", str(tmp_path / "kb"), "--from", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"error: cannot read {tmp_path}: Is a directory"


def test_a_case_whose_log_fixture_is_a_fifo_is_refused_not_waited_on(tmp_path: Path, capsys):
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "log", "file": "job.log", "expected": None}) + "\n")
    assert _within(60, lambda: main(["kb", "eval", str(cases)]), fifo) == 2
    assert f"error: {fifo}: not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_export_feedback_to_a_place_it_cannot_write_says_so_in_one_line(tmp_path: Path, capsys, where: str):
    db = tmp_path / "tracebot.sqlite3"
    Store(db)
    (tmp_path / "a-file").write_text("")
    out = tmp_path if where == "folder" else tmp_path / "a-file" / "cases.jsonl"
    assert main(["kb", "export-feedback", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {out}: ") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["folder", "fifo", "missing"])
def test_kb_import_names_what_it_was_given_instead_of_calling_everything_missing(tmp_path: Path, capsys, kind: str):
    doc = tmp_path / "runbook.md"
    if kind == "folder":
        doc.mkdir()
    elif kind == "fifo":
        os.mkfifo(doc)
    said = {"folder": "a directory", "fifo": "not a regular file", "missing": "no such file"}[kind]
    assert main(["kb", "import", str(doc), "--out", str(tmp_path / "drafts")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {doc}: {said}; kb import reads a document")


def test_kb_new_from_the_same_thread_again_leaves_the_draft_being_edited_alone(tmp_path: Path, capsys, monkeypatch):
    from tests.slack.tiny_kb import write_tiny_kb

    monkeypatch.delenv("TRACEBOT_CONFIG", raising=False)
    kb = write_tiny_kb(tmp_path / "knowledge")
    thread = tmp_path / "thread.json"
    thread.write_text(json.dumps({"messages": [
        {"ts": "1.1", "user": "U0ERIN", "text": "ValueError: shard index 11 out of range for dataset with 8 shards"},
        {"ts": "1.2", "user": "U0CAROL", "text": "--num-shards must match the dataset"},
    ]}))
    args = ["kb", "new", "--from-thread", str(thread), "--fix", "1", "--knowledge", str(kb), "--out", str(tmp_path)]
    assert main(args) == 0
    draft = tmp_path / "valueerror-shard-index-out-of-range.yaml"
    draft.write_text(draft.read_text().replace("TODO: why this happens, in your own words", "Sharded with 16."))
    capsys.readouterr()
    assert main(args) == 2
    assert f"error: {draft} is already there" in capsys.readouterr().err
    assert "Sharded with 16." in draft.read_text()


def test_export_feedback_refuses_to_write_over_an_existing_file_unless_forced(tmp_path: Path, capsys):
    """A typo'd --out naming the database (or a reviewed export) was truncated without a word."""
    db = tmp_path / "tracebot.sqlite3"
    Store(db)
    assert main(["kb", "export-feedback", "--db", str(db), "--out", str(db)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {db} exists; pass --force to write over it"
    assert db.stat().st_size > 0 and Store.existing(db).count("diagnoses") == 0, "the database is still one"
    reviewed = tmp_path / "cases.jsonl"
    reviewed.write_text('{"id": "kept"}\n')
    assert main(["kb", "export-feedback", "--db", str(db), "--out", str(reviewed), "--force"]) == 0
    assert reviewed.read_text() == ""  # no votes yet: written over, as asked


def test_export_feedback_never_writes_through_a_symlink_even_forced(tmp_path: Path, capsys):
    db = tmp_path / "tracebot.sqlite3"
    Store(db)
    target = tmp_path / "corpus.jsonl"
    target.write_text('{"id": "kept"}\n')
    link = tmp_path / "out.jsonl"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "elsewhere.jsonl")
    for out in (link, dangling):
        assert main(["kb", "export-feedback", "--db", str(db), "--out", str(out), "--force"]) == 2
        assert capsys.readouterr().err.strip() == f"error: {out} is a symbolic link; tracebot does not write through one"
    assert target.read_text() == '{"id": "kept"}\n' and not (tmp_path / "elsewhere.jsonl").exists()
