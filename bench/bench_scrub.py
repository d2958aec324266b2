"""What the secret scrubber costs on hostile words against ordinary text of the same length. Prints JSON.

Everything tracebot sends, logs or audits passes :class:`tracebot.secrets.Scrubber` (and stored examples
:func:`tracebot.secrets.without_people`). A word a user or a job controls ("a-a-a-…": a slash command, a
log line) must cost about what prose of its length costs: the ratio stays near 1 as the length grows
(it grew with the length, 16 s at 40,000 characters, before the name patterns were made linear).

Usage: .venv/bin/python bench/bench_scrub.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.secrets import Scrubber, without_people  # noqa: E402

PROSE = "RuntimeError: CUDA error: an illegal memory access was encountered on rank 3 of job 4242. "
HOSTILE = {"dashes": "a-", "dots": "a.", "letters": "a", "flags": "--a "}
# (prefix, unit): "wandb login" then flags and no key was tried 2^n ways before its flags were read one way
PREFIXED = {"wandb-flags": ("wandb login ", "--a ")}


def _time(text: str, scrubber: Scrubber, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        without_people(scrubber.text(text))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    scrubber = Scrubber.for_process()
    out = []
    for n in (4_000, 40_000, 400_000):
        prose = (PROSE * (n // len(PROSE) + 1))[:n]
        base = _time(prose, scrubber)
        words = {name: ("", unit) for name, unit in HOSTILE.items()} | PREFIXED
        for name, (prefix, unit) in words.items():
            t = _time(prefix + (unit * (n // len(unit) + 1))[: n - len(prefix)], scrubber)
            out.append({"chars": n, "word": name, "seconds": round(t, 4), "prose_seconds": round(base, 4),
                        "ratio": round(t / base, 2)})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
