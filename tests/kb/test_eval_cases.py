"""``kb eval`` on a cases file someone got wrong: one line that says what and where, exit 2, never a traceback
or a wait with nothing said."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tracebot.authoring.evaluate import CaseError, load_cases
from tracebot.cli import main


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ({"id": "a", "text": "x", "expected": None, "also_ok": 5}, "'also_ok' must be a list of entry ids"),
        ({"id": "a", "text": "x", "expected": None, "not_ok": "cuda-oom"}, "'not_ok' must be a list of entry ids"),
        ({"id": "a", "text": ["CUDA out of memory"], "expected": None}, "'text' must be a string, not a list"),
        ({"id": "a", "file": 7, "expected": None}, "'file' must be a string, not a number"),
        ({"id": "a", "text": "x", "expected": ["cuda-oom"]}, "'expected' must be an entry id or null, not a list"),
    ],
)
def test_a_case_field_of_the_wrong_type_is_named_with_its_line_not_a_traceback(tmp_path: Path, capsys, case, said):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "ok", "text": "fine", "expected": None}) + "\n" + json.dumps(case) + "\n")
    with pytest.raises(CaseError) as err:
        load_cases(cases)
    assert str(err.value).startswith(f"{cases}:2: {said}")
    assert main(["kb", "eval", str(cases)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {err.value}"


def test_a_fifo_given_as_the_cases_file_is_refused_at_once_not_waited_on(tmp_path: Path, capsys):
    fifo = tmp_path / "cases.jsonl"
    os.mkfifo(fifo)
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(main(["kb", "eval", str(fifo)])), daemon=True)
    worker.start()
    worker.join(10)
    if not done:  # unblock the reader that waits for a writer, so the test process can end
        with open(fifo, "w"):
            pass
        worker.join(10)
        pytest.fail("kb eval waited for a writer on a FIFO")
    assert done == [2]
    assert "not a regular file" in capsys.readouterr().err


def test_a_case_expecting_an_entry_the_knowledge_base_lacks_is_warned_about_by_name(tmp_path: Path, capsys):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "typo", "text": "torch.OutOfMemoryError: CUDA out of memory.", "expected": "cuda-ooom"}) + "\n"
        + json.dumps({"id": "fine", "text": "thanks!", "expected": None}) + "\n"
    )
    assert main(["kb", "eval", str(cases)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {cases}: no entry 'cuda-ooom' in the knowledge base (named by typo)" in err
    assert "fine" not in err
