"""A job's log is its owner's text: ``/trace job`` scans it for first errors within its time budget, whatever
its lines hold."""

from __future__ import annotations

import time
from pathlib import Path

from tracebot.matcher.logscan import scan_log


def test_a_log_of_long_dotted_runs_is_scanned_within_its_budget_and_every_error_line_listed(tmp_path: Path):
    # "A.A.A.… error": a word starts after each ".", and the error-line pattern read the rest of the run again
    # from each start (3 s a 16 KB line), so 12 lines held a /trace job's worker for ~40 s against a 10 s budget
    log = tmp_path / "slurm-6.out"
    log.write_text("\n".join(["A." * 8000 + " error"] * 12 + ["torch.cuda.OutOfMemoryError: CUDA out of memory"]) + "\n")
    start = time.monotonic()
    scan = scan_log(log, budget_s=10.0)
    assert time.monotonic() - start < 10.0
    assert not scan.truncated and len(scan.errors) == 13
    assert scan.errors[-1].text.startswith("torch.cuda.OutOfMemoryError")


def test_a_paste_of_one_long_word_is_read_within_a_reply_s_time_and_an_exception_name_still_counts():
    # "[A-Z]\w*Error" was tried from every letter of a word and read the rest of it each time: one 40,000-character
    # word (a Slack message's length) took ~29 s in text_info, before any answer
    from tracebot.matcher.features import text_info

    hostile = "Aa" * 20000
    start = time.monotonic()
    info = text_info(hostile, hostile)
    assert time.monotonic() - start < 10.0
    assert not info.has_error
    # what the pattern is for still counts, also after a CJK word ("报错OSError") or a leading underscore
    assert text_info("训练时报错OSError：空间不足", "").has_error
    assert text_info("调用时出现_InactiveRpcError，怎么办", "").has_error
