"""Which line of a text states an error: ``line_score`` and ``scores_at_least`` read a line as its signal and noise
patterns do one by one, whatever its characters. (One RE2 search of all the signals tells an ASCII line that states
nothing; it must never miss a line that ``re`` reads a signal in.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracebot.matcher.signals import NOISE, SIGNALS, line_score, scores_at_least

REPO = Path(__file__).resolve().parents[2]


def _by_each_pattern(text: str) -> int:
    if len(text) < 12 or any(p.search(text) for p in NOISE):
        return 0
    return sum(weight for pattern, weight in SIGNALS if pattern.search(text))


@pytest.mark.parametrize(
    "line",
    [
        # white space that re's \s reads and RE2's does not: the exception's colon must still count
        "SystemExit\x0b: 3 raised by the launcher",
        "torch.distributed.DistBackendInterrupt\x1c: rank 3",
        "ValueError\x1f:  bad shape for the batch",
        "the job\x0btimed out after 600 seconds",
        # not ASCII: read by re alone
        "\u212aILLED by the kernel on node 3",
        "ＣＵＤＡ error: an illegal memory access was encountered",
        "学習ジョブがエラーで落ちました、rank 3 だけ",
        # nothing stated, noise, and a short line
        "iteration   1200 | loss 1.2345 | lr 3.0e-4 | tokens/s 101234",
        "NCCL INFO Channel 05/0 : 19 -> 20 via P2P/IPC, but the error path failed",
        "Error: x",
    ],
)
def test_a_line_scores_what_its_signals_add_up_to_whatever_separates_its_words(line: str) -> None:
    expected = _by_each_pattern(line)
    assert line_score(line) == expected
    assert [scores_at_least(line, k) for k in range(1, 12)] == [expected >= k for k in range(1, 12)]


def test_every_line_of_the_corpus_scores_as_its_patterns_read_it() -> None:
    lines = {
        x
        for row in (REPO / "tests" / "corpus" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        if row.strip()
        for raw in (json.loads(row).get("text") or "").splitlines()
        for x in (raw, raw.strip())
    }
    scored = [(x, _by_each_pattern(x)) for x in lines]
    assert sum(1 for _, s in scored if s >= 2) > 100  # the corpus has error lines to tell apart
    assert [x for x, s in scored if line_score(x) != s or scores_at_least(x, 2) != (s >= 2)] == []
