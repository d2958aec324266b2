"""Validate tests/corpus/cases.jsonl and print its counts per kind and per label.

Run: `python tests/corpus/stats.py` (exit status 1 and one line per problem when the file is
invalid; the counts are printed either way so the README table can be pasted from it).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

# `python tests/corpus/stats.py` puts only tests/corpus on sys.path; tests.* needs the root
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.knowledge_ids import CORPUS_IDS, ENTRY_IDS  # noqa: E402

HERE = Path(__file__).parent
CASES = HERE / "cases.jsonl"

# A label is the id of an entry of the bundled knowledge base, so a new entry can be expected by a
# case without editing this file; the covered ones are the entries the corpus was built for.
LABELS = ENTRY_IDS
COVERED_LABELS = CORPUS_IDS
KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "negative", "near-miss"})
LONG_LOG_MIN_LINES = 300


def validate(cases: list[dict], problems: list[str]) -> None:
    seen: set[str] = set()
    for n, case in enumerate(cases, start=1):
        where = f"line {n} ({case.get('id', '?')})"
        cid = case.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"{where}: missing id")
        elif cid in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(cid)
        has_text, has_file = "text" in case, "file" in case
        if has_text == has_file:
            problems.append(f"{where}: needs exactly one of text / file")
        if has_text and not str(case["text"]).strip():
            problems.append(f"{where}: empty text")
        if has_file and not (HERE / case["file"]).is_file():
            problems.append(f"{where}: file {case['file']} does not exist")
        expected = case.get("expected", "missing")
        if expected is not None and expected not in LABELS:
            problems.append(f"{where}: unknown expected label {expected!r}")
        also_ok = case.get("also_ok")
        if not isinstance(also_ok, list) or any(label not in LABELS for label in also_ok):
            problems.append(f"{where}: also_ok must be a list of known labels")
        elif expected in also_ok:
            problems.append(f"{where}: also_ok repeats expected")
        if case.get("kind") not in KINDS:
            problems.append(f"{where}: unknown kind {case.get('kind')!r}")
        if expected is None and also_ok:
            problems.append(f"{where}: a negative cannot have also_ok")
        if not case.get("source"):
            problems.append(f"{where}: missing source")


def read_cases(path: Path = CASES) -> tuple[list[dict], list[str]]:
    """Parse the JSONL file and check every case; returns the cases and the problems found."""
    problems: list[str] = []
    cases = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            cases.append(json.loads(raw))
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc})")
    validate(cases, problems)
    for cid, lines, _ in long_logs(cases, path.parent):
        if lines < LONG_LOG_MIN_LINES:
            problems.append(f"{cid}: long log has {lines} lines (< {LONG_LOG_MIN_LINES})")
    return cases, problems


def long_logs(cases: list[dict], root: Path = HERE) -> list[tuple[str, int, str | None]]:
    """(id, line count, expected) of every case that points at a log file."""
    found = []
    for case in cases:
        if "file" in case:
            path = root / case["file"]
            lines = len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0
            found.append((case["id"], lines, case.get("expected")))
    return found


def per_label(cases: list[dict]) -> Counter:
    return Counter(case["expected"] for case in cases if case.get("expected"))


def main() -> int:
    cases, problems = read_cases()
    logs = long_logs(cases)
    negatives = sum(1 for case in cases if case.get("expected") is None)
    print(f"total cases: {len(cases)}")
    print(f"negatives (expected null): {negatives}")
    print(f"long multi-rank logs: {len(logs)}")
    print("\nper kind:")
    for kind, count in sorted(Counter(case.get("kind") for case in cases).items()):
        print(f"  {kind:<10} {count:>4}")
    print("\nper expected label (positives):")
    counts = per_label(cases)
    for label in sorted(LABELS, key=lambda lab: (-counts[lab], lab)):
        print(f"  {label:<40} {counts[label]:>3}")
    print("\nlong logs:")
    for cid, lines, expected in logs:
        print(f"  {cid:<40} {lines:>5} lines  -> {expected}")
    if problems:
        print("\nPROBLEMS:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nvalid: every line parses, ids unique, labels known, files exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
