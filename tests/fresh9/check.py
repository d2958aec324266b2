"""Validate the ninth fresh blind evaluation set (tests/fresh9/cases.jsonl).

The eighth set's rules exactly (tests/fresh8/check.py: GitHub issue/PR threads only, none in
/work/avoid-urls.txt, at most 2 cases per thread; >= 150 cases, >= 50 expected null, >= 40 prose, >= 10 ja,
at least one chat, line, traceback and log case; at most 12 cases per label, a warning above 10), loaded
by path from that file rather than copied. Plain Python 3.11 standard library.

Usage: python3 tests/fresh9/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("fresh8_check", Path(__file__).resolve().parent.parent / "fresh8" / "check.py")
_fresh8 = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_fresh8)  # type: ignore[union-attr]

if __name__ == "__main__":
    if _fresh8.AVOID is None:
        print(f"warning: {_fresh8.AVOID_FILE} not found; the avoid-list check was skipped", file=sys.stderr)
    sys.exit(_fresh8.main(sys.argv, _fresh8.RULES, Path(__file__).parent))
