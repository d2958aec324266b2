"""What log triage costs, in one run against the matcher without it. Prints JSON.

Targets (issue 11): triage adds at most 20 % to ``diagnose`` on a 20 MB, 512-rank log, and a 100 MB log
is triaged in at most 5 s on this project's 2-core machine, memory bounded as before. The baseline is the
same matcher with the triager switched off (``tracebot.matcher.core.Triager`` replaced by a no-op), on the
same file, in the same process, alternating runs.

A third log is the worst case for triage: 20 MB in which every line is a watchdog line (512 ranks, one
collective after another), so every line is a candidate and goes through the triager.

Usage: .venv/bin/python bench/bench_triage.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.matcher import core, load_matcher  # noqa: E402
from tracebot.matcher.triage import Triager  # noqa: E402


class NoTriage(Triager):
    """The baseline: sees every line and concludes nothing."""

    def add(self, line_no: int, raw: str, cleaned: object = None, key: object = None) -> None:
        return None


def make_log(path: Path, target_bytes: int, ranks: int = 512, seed: int = 3) -> None:
    """A 512-rank job on 64 hosts: progress and NCCL chatter from every rank, one KeyError on rank 301, then
    the watchdog cascade from every other rank (real line shapes, see tests/triage/make_logs.py)."""
    rng = random.Random(seed)
    with path.open("w") as out:
        written, step = 0, 0
        while written < target_bytes * 0.97:
            r = rng.randrange(ranks)
            line = (f"[2024-05-01 10:{step // 6000 % 60:02d}:{step // 100 % 60:02d}.{step % 100:02d}] gpu-{r // 8:03d}: "
                    f"[rank{r}]: iteration {step:8d} | lm loss {3 - step * 1e-6:.6E} | grad norm 0.91 | "
                    f"NCCL INFO Channel {step % 32:02d}/32 : {r} -> {(r + 1) % ranks} via P2P/IPC\n")
            out.write(line)
            written += len(line)
            step += 1
        out.write("[2024-05-01 11:00:00.00] gpu-037: [rank301]: Traceback (most recent call last):\n")
        out.write('[2024-05-01 11:00:00.00] gpu-037: [rank301]:   File "/home/a/data.py", line 44, in collate\n')
        out.write("[2024-05-01 11:00:00.00] gpu-037: [rank301]: KeyError: 'labels'\n")
        for r in range(ranks):
            if r != 301:
                out.write(f"[2024-05-01 11:10:00.{r % 100:02d}] gpu-{r // 8:03d}: [rank{r}]:[E501 ProcessGroupNCCL.cpp:607] "
                          f"[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=90211, "
                          "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 milliseconds "
                          "before timing out.\n")


def make_worst_log(path: Path, target_bytes: int, ranks: int = 512) -> None:
    """Every line error-ish: 512 ranks printing watchdog timeouts (and their "detected by watchdog" line)
    collective after collective, the case where triage reads every line of the log."""
    with path.open("w") as out:
        written, seq = 0, 1000
        while written < target_bytes:
            for r in range(ranks):
                stamp = f"[2024-05-01 11:{seq // 60 % 60:02d}:{seq % 60:02d}.{r % 100:02d}] gpu-{r // 8:03d}: [rank{r}]:"
                lines = (f"{stamp}[E501 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation "
                         f"timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                         f"ran for 600043 milliseconds before timing out.\n"
                         f"{stamp}[E501 ProcessGroupNCCL.cpp:1664] [PG 0 Rank {r}] Exception (either an error or "
                         f"timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed "
                         f"NCCL work: {seq - 1}.\n")
                out.write(lines)
                written += len(lines)
            seq += 1


def timed(matcher, path: Path, triage: bool) -> tuple[float, object]:
    core.Triager = Triager if triage else NoTriage  # type: ignore[misc]
    start = time.perf_counter()
    d = matcher.diagnose_file(path, deadline_s=None)
    return time.perf_counter() - start, d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller logs and fewer runs")
    args = ap.parse_args()
    _kb, matcher, _errors = load_matcher(REPO / "knowledge")
    sizes = {"20MB": 20 << 20, "100MB": 100 << 20, "200MB": 200 << 20} if not args.quick else {"4MB": 4 << 20, "20MB": 20 << 20}
    worst = 20 << 20 if not args.quick else 4 << 20
    runs = 5 if not args.quick else 2
    report: dict[str, object] = {"runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(label, size, make_log) for label, size in sizes.items()]
        cases.append((f"worst_{worst >> 20}MB_all_watchdog", worst, make_worst_log))
        for label, size, make in cases:
            path = Path(tmp) / f"{label}.log"
            make(path, size)
            on, off = [], []
            found = None
            for _ in range(runs):
                t, _d = timed(matcher, path, triage=False)
                off.append(t)
                t, found = timed(matcher, path, triage=True)
                on.append(t)
            ff = found.first_failure if found else None
            report[label] = {
                "bytes": path.stat().st_size,
                "with_triage_s": round(statistics.median(on), 3),
                "without_triage_s": round(statistics.median(off), 3),
                "added": round(statistics.median(on) / statistics.median(off) - 1, 3),
                "first_failure": ff.text[-40:] if ff else None,
                "first_failure_rank": ff.rank if ff else None,
            }
    core.Triager = Triager  # type: ignore[misc]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
