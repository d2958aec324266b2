"""The evaluation and clean corpora stay well-formed and as large as the accuracy numbers need.

Accuracy figures from `tracebot kb eval` are only as honest as the corpus under them: a case with
a misspelt label silently counts as a miss, a missing log file as an error, and a shrinking set of
negatives hides false positives. These tests fail on any of that, and on generated logs drifting
from the generator that is supposed to own them.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent
CLEAN = HERE.parent / "clean"


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


stats = _module("stats")
make_logs = _module("make_logs")


def test_every_case_parses_with_a_known_label_a_source_and_an_existing_log():
    _, problems = stats.read_cases()
    assert problems == []


def test_corpus_is_large_enough_to_measure_accuracy_and_false_positives():
    cases, _ = stats.read_cases()
    negatives = [c for c in cases if c["expected"] is None]
    logs = stats.long_logs(cases)
    assert len(cases) >= 170
    assert len(negatives) >= 45
    assert len(logs) >= 12
    assert all(lines >= stats.LONG_LOG_MIN_LINES for _, lines, _ in logs)


def test_every_covered_entry_id_is_the_expected_answer_of_at_least_two_cases():
    cases, _ = stats.read_cases()
    counts = stats.per_label(cases)
    assert {label for label in stats.COVERED_LABELS if counts[label] < 2} == set()


def test_long_logs_expect_the_root_cause_and_accept_nothing_else():
    cases, _ = stats.read_cases()
    for case in (c for c in cases if "file" in c):
        assert case["also_ok"] == [], case["id"]
        assert case["expected"], case["id"]


def test_regenerating_the_logs_reproduces_the_committed_files_byte_for_byte(tmp_path):
    written = make_logs.generate(tmp_path / "logs", tmp_path / "clean")
    for path, _ in written:
        committed = (HERE / "logs" if path.parent.name == "logs" else CLEAN) / path.name
        assert path.read_bytes() == committed.read_bytes(), f"{committed} differs from make_logs.py output"


def test_every_clean_log_names_its_source_on_its_first_line():
    logs = sorted(CLEAN.glob("*.log"))
    assert len(logs) >= 8
    for log in logs:
        first = log.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# source: "), log.name


def test_known_false_positives_list_has_the_documented_header():
    with (CLEAN / "known-fps.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["file", "line", "entry_id", "reason"]
    for row in rows[1:]:
        assert len(row) == 4 and (CLEAN / row[0]).is_file() and row[3].strip(), row


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def test_no_multi_line_case_shares_a_verbatim_block_with_an_entry_example():
    """A held-out case must not be an entry's own example, or the score measures nothing.

    One-line cases are exempt: a fixed message ("Exiting run.") is the same wherever it is pasted.
    Three or more consecutive identical lines cannot be a coincidence of wording; they mean the
    case and the example were cut from the same paste, and one of them has to change.
    """
    from tracebot.knowledge.loader import load_knowledge_base

    kb, _ = load_knowledge_base(HERE.parent.parent / "knowledge")
    cases, _ = stats.read_cases()
    shared = []
    for case in (c for c in cases if "text" in c):
        case_lines = _lines(case["text"])
        for entry in kb.entries:
            for example in entry.examples_match:
                example_lines = _lines(example)
                short, long_ = sorted((case_lines, example_lines), key=len)
                if len(short) >= 3 and _contains(long_, short):
                    shared.append((case["id"], entry.id))
    assert not shared, f"cases sharing 3+ verbatim lines with an entry example: {shared}"
