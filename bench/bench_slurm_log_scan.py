"""Finding the first errors of a job's log: ``tracebot.matcher.logscan.scan_log`` against the naive way.

Writes a log of ``--mb`` MB (training lines, one CUDA OOM error in the middle), then runs each way in
its own process and prints one JSON object with wall seconds, peak RSS (MB) and whether the error was
found with its true line number. ``wc -l`` (reading the file), ``grep -F`` and ``rg -F`` for the error's
text are the floors any scan can hope for; the ratios to them are printed.
Target (speed issue): a 2 GB log scanned whole in ≤ 5 s with ≤ 100 MB peak RSS, the error found. The naive way is what a quick script does: read the whole file,
``splitlines()``, regex every line. The log is deleted at the end.

    .venv/bin/python bench/bench_slurm_log_scan.py [--mb 2048] [--naive-max-mb 1024] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINE = (b"slurm0-a3-ghpc-8: [rank17]: iteration   1200/ 500000 | consumed samples: 1228800 | "
        b"elapsed time per iteration (ms): 812.4 | learning rate: 2.999E-04 | lm loss: 2.431245E+00 |\n")
ERROR = b"slurm0-a3-ghpc-8: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"

SCAN = """
import sys
from pathlib import Path
from tracebot.matcher.logscan import scan_log
scan = scan_log(Path(sys.argv[1]), budget_s=60)
print(next((e.line_no for e in scan.errors if "CUDA out of memory" in e.text), None))
"""
NAIVE = """
import re, sys
pattern = re.compile(r"Error|Exception|Traceback|out of memory")
lines = open(sys.argv[1], "rb").read().decode("utf-8", "replace").splitlines()
print(next((i for i, line in enumerate(lines, 1) if pattern.search(line) and "CUDA out of memory" in line), None))
"""


def write_log(path: Path, size: int) -> int:
    """Training lines with the error half-way: far from both ends, where head/tail sampling missed it."""
    block = LINE * ((1 << 20) // len(LINE))
    per_block = (1 << 20) // len(LINE)
    blocks = max(2, -(-size // len(block)))
    with path.open("wb") as f:
        for i in range(blocks):
            if i == blocks // 2:
                f.write(ERROR)
            f.write(block)
    return blocks // 2 * per_block + 1


def measure(code: str, path: Path) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; its peak RSS is the largest child's ru_maxrss."""
    wrapper = ("import resource, subprocess, sys, time\n"
               "t = time.perf_counter()\n"
               "p = subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2]], capture_output=True, text=True,"
               " cwd=sys.argv[3])\n"
               "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
               " p.stdout.strip() or p.stderr.strip()[-200:])\n")
    out = subprocess.run([sys.executable, "-c", wrapper, code, str(path), str(REPO)], capture_output=True,
                         text=True, check=True, timeout=900).stdout.split(maxsplit=2)
    return {"seconds": round(float(out[0]), 2), "peak_rss_mb": round(int(out[1]) / 1024, 1), "answer": out[2].strip()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=2048)
    ap.add_argument("--naive-max-mb", type=int, default=1024,
                    help="skip the naive way above this size (it needs ~3x the file in RAM)")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    path = Path(args.dir) / f"tracebot-bench-{os.getpid()}.log"
    try:
        started = time.perf_counter()
        error_line = write_log(path, args.mb << 20)
        report: dict[str, object] = {
            "bench": "slurm_log_scan", "log_mb": round(path.stat().st_size / (1 << 20)), "error_line": error_line,
            "write_seconds": round(time.perf_counter() - started, 2), "python": platform.python_version(),
            "cpus": os.cpu_count(),
        }
        report["scan_log"] = measure(SCAN, path)
        report["scan_log"]["correct"] = report["scan_log"]["answer"] == str(error_line)  # type: ignore[index]
        # Baselines on the same file in the same run: reading it and counting lines (wc -l), finding the
        # error's text (grep -F stops at the first hit; rg -F reads the whole file).
        scan_s = report["scan_log"]["seconds"]  # type: ignore[index]
        for name, argv in (("wc_l", ["wc", "-l", str(path)]),
                           ("grep_F", ["grep", "-F", "-n", "-m1", "CUDA out of memory", str(path)]),
                           ("rg_F", ["rg", "-F", "-c", "CUDA out of memory", str(path)])):
            if not shutil.which(argv[0]):
                report[f"{name}_s"] = f"{argv[0]} not installed"
                continue
            t = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False, timeout=900)
            took = time.perf_counter() - t
            report[f"{name}_s"] = round(took, 3)
            report[f"ratio_to_{name}"] = round(scan_s / took, 1)
        report["load_average"] = os.getloadavg()[0]
        report["targets"] = {"scan_le_5s": report["scan_log"]["seconds"] <= 5,  # type: ignore[index]
                             "peak_rss_le_100mb": report["scan_log"]["peak_rss_mb"] <= 100,  # type: ignore[index]
                             "error_found": report["scan_log"]["correct"]}  # type: ignore[index]
        if args.mb <= args.naive_max_mb:
            report["naive"] = measure(NAIVE, path)
            report["naive"]["correct"] = report["naive"]["answer"] == str(error_line)  # type: ignore[index]
        else:
            report["naive"] = {"skipped": f"log larger than --naive-max-mb {args.naive_max_mb}"}
        print(json.dumps(report, indent=2))
    finally:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
