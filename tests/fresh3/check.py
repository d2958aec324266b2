"""Validate the third fresh blind evaluation set (tests/fresh3/cases.jsonl).

Checks that every line is a JSON object of the documented shape, that ids are unique,
that labels come from the fixed list of 53 knowledge-base ids, that kinds are known and
that the set meets its minimum sizes; then prints the counts per kind and per label.
Exits non-zero on any problem. Plain Python 3.11 standard library.

Usage: python3 tests/fresh3/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fresh"))
# the first fresh set's 53 labels and its checks of one case
from check import LABELS  # noqa: E402
from check import check_case as _check_case  # noqa: E402

KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "chat"})

MIN_CASES = 160
MIN_NEGATIVES = 50  # cases whose expected answer is silence (expected: null)
MIN_PER_KIND = {"prose": 50, "ja": 12, "traceback": 25, "line": 20, "log": 8, "chat": 8}
SOFT_MAX_PER_LABEL = 10  # warning above this
HARD_MAX_PER_LABEL = 12  # error above this


def check_case(n: int, case: object, seen: set[str]) -> list[str]:
    """Return the problems found in one case (line number n)."""
    return _check_case(n, case, seen, KINDS)


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("cases.jsonl")
    problems: list[str] = []
    cases: list[dict] = []
    seen: set[str] = set()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            case = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: invalid JSON ({exc})")
            continue
        found = check_case(n, case, seen)
        problems.extend(found)
        if not found:
            cases.append(case)

    kinds = Counter(c["kind"] for c in cases)
    labels = Counter(c["expected"] for c in cases)
    negatives = labels[None]
    prose = kinds["prose"] + kinds["ja"]
    sources = Counter(c["source"].split(" ")[-1].rstrip("/") for c in cases)
    for src, count in sources.items():
        if count > 2:
            problems.append(f"source used {count} times (max 2): {src}")

    print(f"{len(cases)} valid cases in {path}")
    print("per kind:")
    for kind in sorted(KINDS):
        print(f"  {kind:<10} {kinds[kind]:>4}")
    print(f"negatives (expected null): {negatives}")
    print(f"prose questions (prose + ja): {prose}, of which ja: {kinds['ja']}")
    print(f"distinct sources: {len(sources)}")
    print(f"labels covered: {len(set(labels) - {None})} of {len(LABELS)}")
    print("per label:")
    for label in sorted(LABELS):
        count = labels[label]
        flag = ""
        if count > HARD_MAX_PER_LABEL:
            problems.append(f"label {label}: {count} cases (more than {HARD_MAX_PER_LABEL})")
        elif count > SOFT_MAX_PER_LABEL:
            flag = "  (warning: above ~10)"
        print(f"  {label:<42} {count:>3}{flag}")
    uncovered = sorted(LABELS - set(labels))
    if uncovered:
        print("labels without a case: " + ", ".join(uncovered))

    minimums = (
        (len(cases), MIN_CASES, "cases"),
        (negatives, MIN_NEGATIVES, "negatives"),
    ) + tuple((kinds[k], n, f"{k} cases") for k, n in MIN_PER_KIND.items())
    for have, need, what in minimums:
        if have < need:
            problems.append(f"only {have} {what}, need at least {need}")

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
