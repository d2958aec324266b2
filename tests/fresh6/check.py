"""Validate the sixth fresh blind evaluation set (tests/fresh6/cases.jsonl) with the first set's checks
(:mod:`tests/fresh/check.py`) and this set's rules: its kinds, minimum sizes per kind, at most 2 cases per
source, at most 12 cases per label (warning above 10). Plain Python 3.11 standard library.

Usage: python3 tests/fresh6/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fresh"))
from check import Rules, main  # noqa: E402

KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "chat"})
RULES = Rules(KINDS, min_cases=150, min_negatives=55, at_least=tuple(((k,), n) for k, n in {
    "prose": 40, "ja": 8, "traceback": 15, "line": 15, "log": 6, "chat": 8}.items()),
    soft_max_per_label=10, hard_max_per_label=12, max_per_source=2)

if __name__ == "__main__":
    sys.exit(main(sys.argv, RULES, Path(__file__).parent))
