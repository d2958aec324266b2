"""Validate tests/holdout/cases.jsonl: every line parses, ids unique, labels are
entry ids of knowledge/, files exist and are long multi-rank logs, counts meet targets.

Usage: python tests/holdout/check.py   (exit status 1 on any problem)
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

# `python tests/holdout/check.py` puts only tests/holdout on sys.path; tests.* needs the root
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.knowledge_ids import ENTRY_IDS  # noqa: E402

HERE = Path(__file__).parent

# A label is the id of an entry of the bundled knowledge base (its file name). The set was written
# knowing the ids alone; reading them here rather than keeping a copy makes a renamed or removed entry
# fail this check as an unknown label, and a new entry count as a label with no edit.
LABELS = ENTRY_IDS
KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "negative", "near-miss"})
KEYS = {"id", "expected", "also_ok", "source", "kind"}


def check(path: Path) -> list[str]:
    problems: list[str] = []
    ids: Counter[str] = Counter()
    per_label: Counter[str] = Counter()
    negatives = long_logs = 0
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            case = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc})")
            continue
        where = f"line {n} ({case.get('id')})"
        if missing := KEYS - case.keys():
            problems.append(f"{where}: missing {sorted(missing)}")
        if ("text" in case) == ("file" in case):
            problems.append(f"{where}: needs exactly one of text/file")
        ids[case.get("id")] += 1
        expected = case.get("expected")
        if expected is not None and expected not in LABELS:
            problems.append(f"{where}: unknown label {expected!r}")
        for alt in case.get("also_ok", []):
            if alt not in LABELS:
                problems.append(f"{where}: unknown also_ok label {alt!r}")
        if case.get("kind") not in KINDS:
            problems.append(f"{where}: unknown kind {case.get('kind')!r}")
        if not case.get("source"):
            problems.append(f"{where}: empty source")
        if "text" in case and not str(case["text"]).strip():
            problems.append(f"{where}: empty text")
        if expected is None:
            negatives += 1
        else:
            per_label[expected] += 1
        if "file" in case:
            log = HERE / case["file"]
            if not log.is_file():
                problems.append(f"{where}: missing file {case['file']}")
                continue
            lines = log.read_text(encoding="utf-8").splitlines()
            if not lines[0].startswith("# source: "):
                problems.append(f"{where}: {case['file']} lacks '# source:' first line")
            if len(lines) >= 300:
                long_logs += 1
            else:
                problems.append(f"{where}: {case['file']} has only {len(lines)} lines")
    problems += [f"duplicate id {i!r}" for i, k in ids.items() if k > 1]
    total = sum(ids.values())
    uncovered = sorted(LABELS - per_label.keys())
    print(f"cases: {total}  negatives: {negatives}  long logs: {long_logs}  labels covered: {len(per_label)}/{len(LABELS)}")
    for label, k in sorted(per_label.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {k:3d}  {label}")
    if uncovered:
        print(f"  not covered: {uncovered}")
    if total < 110:
        problems.append(f"only {total} cases (target 110)")
    if negatives < 35:
        problems.append(f"only {negatives} negatives (target 35)")
    if long_logs < 6:
        problems.append(f"only {long_logs} long logs (target 6)")
    return problems


if __name__ == "__main__":
    found = check(HERE / "cases.jsonl")
    for p in found:
        print("PROBLEM:", p)
    sys.exit(1 if found else 0)
