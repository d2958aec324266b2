"""Validate the tenth fresh blind evaluation set (tests/fresh10/cases.jsonl).

Runs the first set's checks (tests/fresh/check.py: JSON keys, kebab ids, labels, kinds, log length
10-150 lines, the counts), allowing one optional extra key, ``note`` (a short reason for the label), with
this set's source rules:

- every source (for a Japanese rendering: the URL it renders) is a GitHub issue or pull-request thread
  (either half of the public-source partition of /work/url_half.py may be used);
- no source is in /work/avoid-urls.txt (threads already used by the project and its other sets), so
  every source prints ``new`` in /work/url_half.py;
- at most 2 cases per thread (an issue comment or PR sub-page counts as its thread);

and this set's minimums: >= 150 cases, >= 50 expected null, >= 40 prose, >= 10 ja, and at least one
chat, line, traceback and log case; at most 12 cases per label (warning above 10). Plain Python 3.11
standard library.

Usage: python3 tests/fresh10/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fresh"))
from check import Rules, main  # noqa: E402

# fresh7's validator reads sources the same way (url_half.py's normalisation, the last URL of a source, the avoid
# list, the Japanese-rendering form): one copy, loaded by path (both files are named check.py)
_spec = importlib.util.spec_from_file_location("fresh7_check", Path(__file__).resolve().parent.parent / "fresh7" / "check.py")
_fresh7 = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_fresh7)  # type: ignore[union-attr]
KINDS, AVOID, AVOID_FILE, JA_RENDERING = _fresh7.KINDS, _fresh7.AVOID, _fresh7.AVOID_FILE, _fresh7.JA_RENDERING
norm, source_url = _fresh7.norm, _fresh7.source_url

THREAD_RE = re.compile(r"^github\.com/[^/]+/[^/]+/(?:issues|pull|discussions)/\d+$")


def source_problems(case: dict) -> list[str]:
    """This set's source rules for one valid case: a GitHub thread, not already used, a Japanese rendering
    said so."""
    url = source_url(case["source"])
    thread = norm(url)
    problems = []
    if not THREAD_RE.match(thread):
        problems.append(f"source is not a GitHub issue/PR thread: {thread}")
    if AVOID is not None and thread in AVOID:
        problems.append(f"source is in {AVOID_FILE}: {thread}")
    if case["kind"] == "ja" and not case["source"].startswith(("http", JA_RENDERING)):
        problems.append("ja source must be a URL or a 'ja rendering ...' note")
    return problems


RULES = Rules(KINDS, min_cases=150, min_negatives=50,
              at_least=((("prose",), 40), (("ja",), 10), (("chat",), 1), (("line",), 1), (("traceback",), 1),
                        (("log",), 1)),
              soft_max_per_label=10, hard_max_per_label=12, max_per_source=2, min_null_share=0.0,
              optional_keys=frozenset({"note"}), thread=lambda source: norm(source_url(source)),
              source_problems=source_problems)

if __name__ == "__main__":
    if AVOID is None:
        print(f"warning: {AVOID_FILE} not found; the avoid-list check was skipped", file=sys.stderr)
    sys.exit(main(sys.argv, RULES, Path(__file__).parent))
