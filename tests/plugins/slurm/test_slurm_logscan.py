"""Searching a job's log for its first errors: rank prefixes, true line numbers through a huge file read
whole, and files that are not plain readable files. Real files in a temp dir; no cluster needed."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from tracebot.matcher.logscan import scan_log
from tracebot.plugins.slurm import logpaths
from tracebot.plugins.slurm.jobinfo import JobView

NOISE = "slurm0-a3-ghpc-{node}: [rank{rank}]: iteration {i} | lm loss 2.43 | grad norm 0.81\n"


def write_log(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines), encoding="utf-8")


def test_first_error_of_each_rank_is_found_with_its_line_number(tmp_path: Path) -> None:
    lines = [NOISE.format(node=6, rank=r % 4, i=i) for i, r in enumerate(range(40))]
    lines[12] = "slurm0-a3-ghpc-6: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    lines[30] = ("slurm0-a3-ghpc-8: [rank17]:[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran for 600070 milliseconds\n")
    log = tmp_path / "job.out"
    write_log(log, lines)
    scan = scan_log(log)
    assert [(e.line_no, e.rank, e.host) for e in scan.errors] == [(13, "3", "slurm0-a3-ghpc-6"), (31, "17", "slurm0-a3-ghpc-8")]
    assert {r: e.line_no for r, e in scan.first_by_rank.items()} == {"3": 13, "17": 31}
    assert not scan.truncated and scan.lines_total == 40


def test_huge_log_is_read_whole_with_true_line_numbers_and_the_error_in_the_middle(tmp_path: Path) -> None:
    log = tmp_path / "huge.out"
    noise = NOISE.format(node=6, rank=0, i=1)
    with log.open("w") as f:
        f.write("Traceback (most recent call last):\n")  # line 1: in the head
        f.write(noise * 100_000)                         # ~7 MB: more than one 4 MB read chunk
        f.write("RuntimeError: lost in the middle\n")     # far from both ends: found all the same
        f.write(noise * 100_000)
        f.write("[rank5]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error\n")
        f.write(noise * 10)
    scan = scan_log(log)
    assert not scan.truncated and not scan.notes
    assert [(e.line_no, e.rank) for e in scan.errors] == [(1, None), (100_002, None), (200_003, "5")]
    assert scan.lines_total == 200_013
    assert scan.bytes_read == log.stat().st_size


def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "job.out"
    os.mkfifo(fifo)
    done: list[str | None] = []
    worker = threading.Thread(target=lambda: done.append(scan_log(fifo).unreadable), daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert done and "FIFO" in (done[0] or "")


def test_missing_file_and_directory_are_named_with_the_reason(tmp_path: Path) -> None:
    assert "does not exist" in (scan_log(tmp_path / "nope.out").unreadable or "")
    assert "directory" in (scan_log(tmp_path).unreadable or "")


def test_gzip_or_binary_junk_does_not_stop_the_scan(tmp_path: Path) -> None:
    log = tmp_path / "mixed.out"
    log.write_bytes(b"\x00\xff\xfe junk \x00\n" * 100 + b"Traceback (most recent call last):\nValueError: bad\n")
    scan = scan_log(log)
    assert [e.line_no for e in scan.errors] == [101, 102]


def test_log_patterns_expand_to_the_batch_steps_own_file_never_a_glob(tmp_path: Path) -> None:
    job = JobView(asked="9", job_id="9", display_id="9", name="pre", user="tanaka", workdir=str(tmp_path),
                  stdout=str(tmp_path / "%x-%j-%N-%t-%s.out"), stderr="rel/%u-%5j.err", batch_host="node01")
    for name in ("pre-9-node01-0-batch.out", "pre-9-node01-1-batch.out", "someone-elses.out"):
        (tmp_path / name).write_text("x\n")
    found = logpaths.candidates(job)
    assert found == [("stdout", tmp_path / "pre-9-node01-0-batch.out"),
                     ("stderr", tmp_path / "rel" / "tanaka-00009.err")]


def test_default_output_name_when_none_was_given(tmp_path: Path) -> None:
    array = JobView(asked="7_2", job_id="7", display_id="7_2", workdir=str(tmp_path), array_job_id="7",
                    array_task_id="2")
    assert logpaths.candidates(array) == [("stdout", tmp_path / "slurm-7_2.out")]


def test_scan_respects_its_time_budget_on_a_slow_huge_read(tmp_path: Path) -> None:
    log = tmp_path / "big.out"
    with log.open("wb") as f:
        f.write(NOISE.format(node=1, rank=1, i=1).encode() * 400_000)  # ~30 MB
    start = time.monotonic()
    scan = scan_log(log, budget_s=0.001)
    assert time.monotonic() - start < 5
    assert scan.truncated and any("time limit" in n for n in scan.notes)
