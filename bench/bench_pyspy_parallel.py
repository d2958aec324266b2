"""Dumping N hung Python processes with py-spy: in parallel (``dump_many``) against one by one.

Prints one JSON object: per N (2, 8, 32 by default) the best-of-``--repeat`` wall times of both ways and
``speedup`` = serial / parallel. The processes are real and blocked in a function; they are always
killed at the end, even on Ctrl-C.

    .venv/bin/python bench/bench_pyspy_parallel.py [--sizes 2,8,32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tracebot.plugins.pyspy.dump import DEFAULT_MAX_WORKERS, ProcessDump, dump_many  # noqa: E402

HUNG = "import threading\ndef all_reduce_wait():\n    threading.Event().wait()\nprint('ready', flush=True)\nall_reduce_wait()\n"


def start_hung(n: int) -> list[subprocess.Popen[str]]:
    procs = [subprocess.Popen([sys.executable, "-c", HUNG], stdout=subprocess.PIPE, text=True) for _ in range(n)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return procs


def wait_all_in_function(pids: list[int], timeout: float = 60.0) -> None:
    """Poll until every process is blocked in all_reduce_wait, so both ways dump the same stacks."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dumps = dump_many(pids)
        if all(isinstance(d, ProcessDump) and any(f.function == "all_reduce_wait" for f in d.frames)
               for d in dumps.values()):
            return
        time.sleep(0.05)
    raise RuntimeError("hung processes did not settle")


def timed(pids: list[int], parallel: bool, repeat: int, max_workers: int) -> tuple[float, int]:
    best = float("inf")
    readable = 0
    for _ in range(repeat):
        started = time.perf_counter()
        dumps = dump_many(pids, parallel=parallel, max_workers=max_workers)
        best = min(best, time.perf_counter() - started)
        readable = sum(isinstance(d, ProcessDump) for d in dumps.values())
    return best, readable


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2,8,32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-workers", type=int, default=DEFAULT_MAX_WORKERS)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    for n in sizes:
        procs = start_hung(n)
        try:
            pids = [p.pid for p in procs]
            wait_all_in_function(pids)
            serial, ok_serial = timed(pids, False, args.repeat, args.max_workers)
            parallel, ok_parallel = timed(pids, True, args.repeat, args.max_workers)
        finally:
            for proc in procs:
                proc.kill()
            for proc in procs:
                proc.wait(timeout=10)
        results.append({"n": n, "serial_s": round(serial, 4), "parallel_s": round(parallel, 4),
                        "speedup": round(serial / parallel, 2), "readable": [ok_serial, ok_parallel]})
    # py-spy spends its ~15 ms per dump on CPU (reading the target's binaries), so the speedup is
    # bounded by the free cores: the load average says how many were free.
    print(json.dumps({"benchmark": "pyspy_dump_parallel_vs_serial", "cpus": os.cpu_count(),
                      "loadavg_1m": round(os.getloadavg()[0], 2),
                      "python": platform.python_version(), "max_workers": args.max_workers,
                      "repeat": args.repeat, "results": results}, indent=2))


if __name__ == "__main__":
    main()
