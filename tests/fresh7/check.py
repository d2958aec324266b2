"""Validate the seventh fresh blind evaluation set (tests/fresh7/cases.jsonl).

Reuses the first set's labels and its check of one case (tests/fresh/check.py: JSON keys, kebab ids,
labels, kinds, log length 10-150 lines), allowing one optional extra key, ``note`` (a short reason for
the label). On top of that it checks this set's source rules:

- every source (for a Japanese rendering: the URL it renders) is in half ``A`` of the public-source
  partition (first hex digit of md5 of the normalised URL in 0-7, as /work/url_half.py computes it);
- no source is in /work/avoid-urls.txt (threads already used by the project and its other sets);
- at most 2 cases per thread (an issue comment or PR sub-page counts as its thread);

and this set's minimums: >= 120 cases, >= 45 % expected null, >= 40 prose, >= 10 ja; at most 12 cases
per label (warning above 10). Plain Python 3.11 standard library.

Usage: python3 tests/fresh7/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fresh"))
from check import LABELS, check_case  # noqa: E402

KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "chat"})
AVOID_FILE = Path("/work/avoid-urls.txt")
MIN_CASES, MIN_NULL_SHARE, MIN_PROSE, MIN_JA = 120, 0.45, 40, 10
SOFT_MAX_PER_LABEL, HARD_MAX_PER_LABEL, MAX_PER_THREAD = 10, 12, 2
URL_RE = re.compile(r"https?://\S+")


def norm(url: str) -> str:
    """The normalisation of /work/url_half.py: scheme, www., query, fragment, trailing slash, case;
    an issue comment or PR sub-page counts as its thread."""
    u = url.strip().lower()
    u = re.sub(r"^https?://", "", u)
    u = re.sub(r"^www\.", "", u)
    u = u.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    m = re.match(r"(github\.com/[^/]+/[^/]+/(?:issues|pull|discussions)/\d+)", u)
    return m.group(1) if m else u


def half(url: str) -> str:
    return "A" if hashlib.md5(norm(url).encode()).hexdigest()[0] in "01234567" else "B"


def source_url(source: str) -> str:
    """The URL a source names (the last URL, so a 'ja rendering ... of the English text at <url>' gives <url>)."""
    urls = URL_RE.findall(source)
    return urls[-1].rstrip(".,;)") if urls else ""


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else HERE / "cases.jsonl"
    avoid = {norm(x) for x in AVOID_FILE.read_text().split() if x.strip()} if AVOID_FILE.exists() else None
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
        if isinstance(case, dict) and "note" in case:
            note = case["note"]
            if not isinstance(note, str) or not note.strip():
                problems.append(f"line {n}: note must be a non-empty string")
            case = {k: v for k, v in case.items() if k != "note"}
        found = check_case(n, case, seen, KINDS)
        problems.extend(found)
        if found:
            continue
        url = source_url(case["source"])
        thread = norm(url)
        if half(url) != "A":
            problems.append(f"line {n} ({case['id']}): source is in half B: {thread}")
        if avoid is not None and thread in avoid:
            problems.append(f"line {n} ({case['id']}): source is in /work/avoid-urls.txt: {thread}")
        if case["kind"] == "ja" and not case["source"].startswith("http") \
                and not case["source"].startswith("ja rendering (by the set's author) of the English text at "):
            problems.append(f"line {n} ({case['id']}): ja source must be a URL or a 'ja rendering ...' note")
        case["_thread"] = thread
        cases.append(case)

    threads = Counter(c["_thread"] for c in cases)
    for thread, count in sorted(threads.items()):
        if count > MAX_PER_THREAD:
            problems.append(f"thread used {count} times (max {MAX_PER_THREAD}): {thread}")
    repos = {"/".join(t.split("/")[:3]) for t in threads if t.startswith("github.com/")}

    kinds = Counter(c["kind"] for c in cases)
    nulls = Counter(c["kind"] for c in cases if c["expected"] is None)
    labels = Counter(c["expected"] for c in cases if c["expected"] is not None)
    negatives = sum(nulls.values())

    print(f"{len(cases)} valid cases in {path}")
    print(f"{'kind':<10} {'cases':>5} {'null':>5}")
    for kind in sorted(KINDS, key=lambda k: -kinds[k]):
        print(f"{kind:<10} {kinds[kind]:>5} {nulls[kind]:>5}")
    share = negatives / len(cases) if cases else 0.0
    print(f"expected null: {negatives} ({share:.0%})")
    print(f"distinct threads: {len(threads)}, GitHub repositories: {len(repos)}")
    print(f"labels covered: {len(labels)} of {len(LABELS)}")
    for label in sorted(LABELS):
        count = labels[label]
        if not count:
            continue
        flag = ""
        if count > HARD_MAX_PER_LABEL:
            problems.append(f"label {label}: {count} cases (more than {HARD_MAX_PER_LABEL})")
        elif count > SOFT_MAX_PER_LABEL:
            flag = f"  (warning: above {SOFT_MAX_PER_LABEL})"
        print(f"  {label:<42} {count:>3}{flag}")
    uncovered = sorted(LABELS - set(labels))
    if uncovered:
        print("labels without a case: " + ", ".join(uncovered))

    if len(cases) < MIN_CASES:
        problems.append(f"only {len(cases)} cases, need at least {MIN_CASES}")
    if share < MIN_NULL_SHARE:
        problems.append(f"only {share:.0%} expected null, need at least {MIN_NULL_SHARE:.0%}")
    if kinds["prose"] < MIN_PROSE:
        problems.append(f"only {kinds['prose']} prose cases, need at least {MIN_PROSE}")
    if kinds["ja"] < MIN_JA:
        problems.append(f"only {kinds['ja']} ja cases, need at least {MIN_JA}")
    if avoid is None:
        print(f"warning: {AVOID_FILE} not found; the avoid-list check was skipped", file=sys.stderr)

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
