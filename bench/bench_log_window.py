"""Save as knowledge on an attached log: the streamed error window against reading the log whole (what
the shortcut did before), on the same file in the same run. Prints JSON: seconds and peak traced memory
of each, and their ratios.

The baseline is the old path: the whole file read into memory, decoded, and
``trim_snippet(text, pick_signatures(text))`` on it. The new one is
:func:`tracebot.authoring.log_window.error_window`.

Usage: .venv/bin/python bench/bench_log_window.py [MB ...]   (default: 10 50)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.authoring.draft import pick_signatures, trim_snippet  # noqa: E402
from tracebot.authoring.log_window import error_window  # noqa: E402
from tracebot.matcher.normalize import to_text  # noqa: E402

ERROR = ["Traceback (most recent call last):", '  File "/home/erin/train.py", line 88, in <module>',
         "ValueError: shard index 11 out of range for dataset with 8 shards"]


def _whole(path: Path) -> str:
    text = to_text(path.read_bytes())
    return trim_snippet(text, pick_signatures(text))


def _measure(fn: Callable[[Path], str], path: Path) -> tuple[float, int, str]:
    tracemalloc.start()
    start = time.perf_counter()
    out = fn(path)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak, out


def main(sizes: list[int]) -> None:
    rows = []
    for mb in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "train.log"
            line = "step {} loss 0.{} lr 3e-4 tokens/s 81234\n"
            n = mb * (1 << 20) // len(line.format(500_000, 50))
            with path.open("w") as f:
                f.writelines(line.format(i, i % 97) for i in range(n // 2))
                f.write("\n".join(ERROR) + "\n")
                f.writelines(line.format(i, i % 97) for i in range(n // 2, n))
            old_s, old_peak, old = _measure(_whole, path)
            new_s, new_peak, new = _measure(error_window, path)
            rows.append({"mb": round(path.stat().st_size / (1 << 20), 1),
                         "whole_seconds": round(old_s, 3), "window_seconds": round(new_s, 3),
                         "whole_peak_mb": round(old_peak / (1 << 20), 1), "window_peak_mb": round(new_peak / (1 << 20), 1),
                         "time_ratio": round(new_s / old_s, 4), "memory_ratio": round(new_peak / old_peak, 4),
                         "same_error_kept": ERROR[-1] in old and ERROR[-1] in new})
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50])
