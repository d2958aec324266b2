"""Behaviour of the matcher on a small knowledge base made here, so the mechanism is tested apart from
the bundled entries (whose own examples are tested in tests/kb/test_kb_examples.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.support import entry_dict, write_kb
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher

OOM = entry_dict(
    "oom",
    title="Out of device memory",
    recognise={
        "anchors": ["CUDA out of memory"],
        "exemplars": ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"],
        "phrases": ["my training runs out of GPU memory", "VRAMにモデルが乗らない"],
    },
)
WATCHDOG = entry_dict(
    "watchdog",
    title="Collective timed out",
    role="symptom",
    recognise={"anchors": ["Watchdog caught collective operation timeout"]},
)
PORT = entry_dict(
    "port",
    recognise={"regex": [r"address already in use"], "unless": [r"retrying with another port"]},
)
KILLED = entry_dict("killed", recognise={"regex": [r"^Killed$"]}, examples={"match": ["Killed"]})
SLOW = entry_dict(
    "slow-download",
    priority=20,
    recognise={"phrases": ["training job takes a long time downloading data", "データのダウンロードが遅い"]},
    examples={"match": ["why does my training job take so long downloading data?"]},
)


@pytest.fixture(scope="module")
def m(tmp_path_factory) -> Matcher:
    root = write_kb(tmp_path_factory.mktemp("kb") / "knowledge", [OOM, WATCHDOG, PORT, KILLED, SLOW])
    kb, errors = load_knowledge_base(root)
    assert not errors, errors
    return Matcher(kb)


def watchdog_line(rank: int) -> str:
    return (
        f"slurm0-a3-ghpc-{rank // 8}: [rank{rank}]:[E ProcessGroupNCCL.cpp:523] [Rank {rank}] Watchdog caught "
        f"collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran for 600070 milliseconds"
    )


def cascade_log(oom_rank: int = 3, ranks: int = 64, noise: int = 400) -> str:
    lines = [f"slurm0-a3-ghpc-{r // 8}: [rank{r}]: step 10 loss 2.{r} lr 3e-4" for r in range(noise)]
    lines.append(f"slurm0-a3-ghpc-0: [rank{oom_rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    lines += [watchdog_line(r) for r in range(ranks) if r != oom_rank]
    return "\n".join(lines)


def test_watchdog_cascade_ranks_below_the_oom_on_rank_3(m):
    d = m.diagnose(cascade_log())
    assert [x.entry_id for x in d.matches[:2]] == ["oom", "watchdog"]
    oom, wd = d.matches[0], d.matches[1]
    assert oom.confident and oom.ranks == ["3"] and oom.hosts == ["slurm0-a3-ghpc-0"]
    assert oom.line_no == 401 and oom.occurrences == 1
    assert wd.occurrences == 63 and len(wd.ranks) == 63 and wd.line_no == 402


def test_root_cause_printed_after_the_symptoms_still_ranks_first(m):
    log = "\n".join([watchdog_line(r) for r in range(32)] + ["[rank7]: RuntimeError: CUDA out of memory."])
    assert m.diagnose(log).best.entry_id == "oom"


def test_long_log_is_scanned_by_candidates_and_reports_correct_line_numbers(m):
    log = cascade_log(noise=40_000)  # ~2.5 MB: the long-log path
    assert len(log) > 256 * 1024
    d = m.diagnose(log)
    assert d.best.entry_id == "oom" and d.best.line_no == 40_001
    assert d.lines_total == log.count("\n") + 1
    assert d.lines_scored < 100  # only the error lines were scored, not 40k lines of noise


@pytest.mark.parametrize("tail", ["\n", ""])
def test_a_line_longer_than_the_read_block_is_one_line_and_the_error_after_it_keeps_its_number(m, tail):
    """A 9 MB line (a minified JSON dump) spans three 4 MB read blocks; each block cut inside it counted
    it again, so the error below it was reported two lines too far down."""
    log = "\n".join(["starting", "x" * (9 << 20), "[rank7]: RuntimeError: CUDA out of memory."]) + tail
    d = m.diagnose(log)
    assert d.best.entry_id == "oom" and d.best.line_no == 3
    assert d.lines_total == 3


def test_every_line_examined_in_short_texts_but_variable_parts_dedupe(m):
    text = "\n".join(f"[rank{r}]: RuntimeError: CUDA out of memory. Tried to allocate {r}.00 GiB" for r in range(5))
    best = m.diagnose(text).best
    assert best.occurrences == 5 and best.ranks == ["0", "1", "2", "3", "4"] and best.line_nos == [1, 2, 3, 4, 5]


def test_ordinary_chat_and_unknown_errors_are_never_confident(m):
    for text in ("thanks!", "lgtm 👍", "is the cluster down?", "SyntaxError: invalid syntax", "", "   "):
        assert not m.diagnose(text).confident, text


def test_fuzzy_exemplar_matches_a_reworded_error(m):
    d = m.diagnose("torch.cuda.OutOfMemoryError: CUDA  out  of memory, tried to allocate 20.00 MiB")
    assert d.best.entry_id == "oom" and d.best.confident


def test_prose_questions_in_english_and_japanese(m):
    assert m.diagnose("Why does my training job take so long downloading data?").best.entry_id == "slow-download"
    d = m.diagnose("データのダウンロードが遅いのはなぜでしょうか")
    assert d.best.entry_id == "slow-download" and d.best.kind == "phrase"


def test_settings_and_log_lines_do_not_count_as_prose(m):
    assert not m.diagnose("2024-02-01 10:04:41 Downloading - Downloading input data").confident


def test_unless_pattern_vetoes_a_line(m):
    assert m.diagnose("OSError: address already in use").best.entry_id == "port"
    assert not m.diagnose("address already in use, retrying with another port").matches


def test_caret_anchored_regex_still_matches_behind_prefixes_in_long_logs(m):
    log = "\n".join([f"0: step {i} ok" for i in range(30_000)] + ["node3: Killed"])
    d = m.diagnose(log)
    assert d.best.entry_id == "killed" and d.best.hosts == ["node3"] and d.best.line_no == 30_001


def test_gzip_binary_junk_and_huge_files_are_handled(m, tmp_path: Path):
    gz = tmp_path / "job.log.gz"
    gz.write_bytes(gzip.compress(cascade_log(noise=5000).encode()))
    assert m.diagnose_file(gz).best.entry_id == "oom"

    junk = tmp_path / "core.bin"
    junk.write_bytes(bytes(range(256)) * 20_000 + b"\n[rank1]: RuntimeError: CUDA out of memory.\n" + b"\x00\xff" * 5000)
    d = m.diagnose_file(junk)
    assert d.best.entry_id == "oom" and any("binary" in n for n in d.notes)

    big = tmp_path / "big.log"
    block = ("[rank5]: step 1 loss 2.5 tokens/s 12345 " * 3 + "\n").encode() * 10_000
    with big.open("wb") as f:
        for _ in range(42):
            f.write(block)
        f.write(b"[rank5]: torch.OutOfMemoryError: CUDA out of memory.\n")
    assert big.stat().st_size > 50_000_000
    d = m.diagnose_file(big)
    assert d.best.entry_id == "oom" and d.best.line_no == 420_001 and not d.truncated


def test_pasted_bytes_that_are_not_utf8_are_decoded_with_replacement(m):
    d = m.diagnose(b"\xff\xff[rank2]: RuntimeError: CUDA out of memory.\x00\n")
    assert d.best.entry_id == "oom" and d.best.ranks == ["2"]


def test_pasted_bytes_with_a_utf16_mark_are_utf16_as_a_file_with_it_is(m):
    """FF FE in front is UTF-16's byte-order mark: a file starting with it was already read as UTF-16, and
    bytes piped to ``tracebot diagnose -`` or attached in the console now are too."""
    d = m.diagnose("[rank2]: RuntimeError: CUDA out of memory.\n".encode("utf-16"))
    assert d.best.entry_id == "oom" and d.best.ranks == ["2"]


def test_a_time_budget_truncates_and_says_so(m, tmp_path: Path):
    big = tmp_path / "slow.log"
    big.write_bytes(b"[rank1]: error: something\n" * 400_000)
    d = m.diagnose_file(big, deadline_s=1e-9)
    assert d.truncated and any("time limit" in n for n in d.notes)


def test_search_finds_entries_by_words(m):
    assert m.search("out of memory on the GPU")[0].entry_id == "oom"


def test_table_headers_and_rows_are_not_prose():
    from tracebot.matcher.core import prose_lines

    table = "JobID JobName Partition State ExitCode Elapsed Timelimit\n1342 pretrain a3 TIMEOUT 0:0 2-00:00:14"
    assert prose_lines(table) == ""
    assert prose_lines("Why does my job get TIMEOUT after two days?") == "Why does my job get TIMEOUT after two days?"
    assert prose_lines("学習が止まってしまいました") == "学習が止まってしまいました"


def test_python_warning_lines_and_paths_are_not_prose():
    from tracebot.matcher.core import prose_lines

    warning = (
        "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:558: UserWarning: This "
        "DataLoader will create 16 worker processes in total, which might get DataLoader running slow or freeze"
    )
    assert prose_lines(warning) == ""
    assert prose_lines("train.py:12: the loss is nan after a few steps") == ""
