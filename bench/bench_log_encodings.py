"""What reading a log in another encoding costs: the same log (accented French lines, one CUDA OOM at the
end) as UTF-8, UTF-16 without a byte-order mark, Latin-1 and gzipped UTF-8, each diagnosed whole from a
file in the same run. Prints JSON: median seconds of three runs and each ratio to UTF-8.

Usage: .venv/bin/python bench/bench_log_encodings.py [LINES]   (default: 80000, about 8 MB in UTF-8)
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.matcher import load_matcher  # noqa: E402

LINE = "2024-05-02 10:00:01 node3: [rank0]: étape 100, perte élevée, durée écoulée, mémoire réservée\n"
OOM = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def main(lines: int) -> dict[str, object]:
    _kb, matcher, _errors = load_matcher(REPO / "knowledge")
    text = LINE * lines + OOM
    forms = {"utf-8": text.encode(), "utf-16-le": text.encode("utf-16-le"), "latin-1": text.encode("latin-1"),
             "gzip utf-8": gzip.compress(text.encode())}
    times: dict[str, list[float]] = {k: [] for k in forms}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {k: Path(tmp) / f"{k.replace(' ', '-')}.log" for k in forms}
        for k, data in forms.items():
            paths[k].write_bytes(data)
        for _ in range(3):
            for k, path in paths.items():
                start = time.perf_counter()
                found = matcher.diagnose_file(path)
                times[k].append(time.perf_counter() - start)
                assert found.confident and found.confident[0].entry_id == "cuda-oom", k
    median = {k: statistics.median(v) for k, v in times.items()}
    return {"utf8_mb": round(len(forms["utf-8"]) / 2**20, 1), "median_s": {k: round(v, 3) for k, v in median.items()},
            "ratio_to_utf8": {k: round(v / median["utf-8"], 2) for k, v in median.items()}}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 80000), indent=1))
