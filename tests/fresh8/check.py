"""Validate the eighth fresh blind evaluation set (tests/fresh8/cases.jsonl).

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

Usage: python3 tests/fresh8/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fresh"))
from check import Rules, main  # noqa: E402

KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "chat"})
AVOID_FILE = Path("/work/avoid-urls.txt")
URL_RE = re.compile(r"https?://\S+")
JA_RENDERING = "ja rendering (by the set's author) of the English text at "


def norm(url: str) -> str:
    """The normalisation of /work/url_half.py: scheme, www., query, fragment, trailing slash, case;
    an issue comment or PR sub-page counts as its thread."""
    u = url.strip().lower()
    u = re.sub(r"^https?://", "", u)
    u = re.sub(r"^www\.", "", u)
    u = u.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    m = re.match(r"(github\.com/[^/]+/[^/]+/(?:issues|pull|discussions)/\d+)", u)
    return m.group(1) if m else u


THREAD_RE = re.compile(r"^github\.com/[^/]+/[^/]+/(?:issues|pull|discussions)/\d+$")


def source_url(source: str) -> str:
    """The URL a source names (the last URL, so a 'ja rendering ... of the English text at <url>' gives <url>)."""
    urls = URL_RE.findall(source)
    return urls[-1].rstrip(".,;)") if urls else ""


AVOID = {norm(x) for x in AVOID_FILE.read_text().split() if x.strip()} if AVOID_FILE.exists() else None


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
