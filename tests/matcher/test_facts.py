"""Values read off the user's error through the named groups of the entry that matched: memory asked for
and free, who else holds the GPU, the collective that timed out, the port that was taken; named in one
vocabulary that the loader enforces and every language labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slack.blocks import texts
from tests.support import entry_dict, write_kb
from tracebot.knowledge.facts import FACT_NAMES
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher, load_matcher
from tracebot.matcher.candidates import CandidateStage
from tracebot.render.messages import LANGS, MESSAGES
from tracebot.render.slack import compact_blocks
from tracebot.render.text import render_match

REPO = Path(__file__).resolve().parents[2]
OOM_HEAD = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.15 GiB of which 1.06 GiB is free."


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    _kb, matcher, errors = load_matcher(REPO / "knowledge")
    assert not errors
    return matcher


def test_an_oom_naming_another_process_says_which_pid_holds_the_memory_and_points_to_zombies(matcher: Matcher):
    line = (f"[rank2]: {OOM_HEAD} Process 48211 has 61.00 GiB memory in use. Including non-PyTorch memory, "
            "this process has 17.08 GiB memory in use. Of the allocated memory 15.20 GiB is allocated by PyTorch.")
    d = matcher.diagnose(line)
    oom = d.matches[0]
    assert oom.entry_id == "cuda-oom" and oom.confident
    assert oom.facts == {"requested": "2.00 GiB", "gpu": "2", "capacity": "79.15 GiB", "free": "1.06 GiB",
                         "in_use": "17.08 GiB", "other_pid": "48211", "other_held": "61.00 GiB"}
    assert oom.see_also == ["gpu-zombie-process"]
    assert [m.entry_id for m in d.matches[:2]] == ["cuda-oom", "gpu-zombie-process"]
    shown = texts(compact_blocks(oom, "en"))
    assert "another process, PID 48211, holds 61.00 GiB on GPU 2 — see gpu-zombie-process" in shown
    assert "asked for 2.00 GiB" in shown and "1.06 GiB free" in shown


def test_an_oom_that_names_only_one_process_does_not_claim_it_is_another(matcher: Matcher):
    # In a container PyTorch cannot tell its own PID from the driver's list: "Process N" may be itself.
    d = matcher.diagnose(f"{OOM_HEAD} Process 20398 has 78.02 GiB memory in use. Of the allocated memory 77.1 GiB")
    oom = d.matches[0]
    assert oom.entry_id == "cuda-oom" and oom.see_also == []
    assert "gpu-zombie-process" not in [m.entry_id for m in d.confident]
    shown = texts(compact_blocks(oom, "en"))
    assert "process 20398 holds 78.02 GiB on GPU 2 (another process, or this one" in shown


def test_a_watchdog_timeout_states_its_collective_sequence_number_and_timeout(matcher: Matcher):
    d = matcher.diagnose(
        "[rank5]:[E1105 04:12:31.553190 881233 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=88213, OpType=_ALLGATHER_BASE, NumelIn=4194304, NumelOut=33554432, "
        "Timeout(ms)=1800000) ran for 1800089 milliseconds before timing out."
    )
    facts = d.matches[0].facts
    assert (facts["collective"], facts["seq"], facts["timeout"]) == ("_ALLGATHER_BASE", "88213", "30 min")


@pytest.mark.parametrize("line", [
    "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29511 (errno: 98 - Address already in use).",
    "gpu-06: torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "port: 29511, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
])
def test_an_address_in_use_error_names_the_port(matcher: Matcher, line: str):
    best = matcher.diagnose(line).matches[0]
    assert best.entry_id == "master-port-in-use" and best.facts["port"] == "29511"


def test_a_named_group_outside_the_vocabulary_is_a_load_error_with_its_line(tmp_path: Path):
    entry = entry_dict("bad", recognise={"regex": [r"port (?P<prot>\d+) taken"]})
    root = write_kb(tmp_path / "kb", [entry_dict("good"), entry])
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good"]
    (err,) = errors
    assert "named group 'prot' is not a known value name" in err.message and "port" in err.message
    assert (root / "bad.yaml").read_text().splitlines()[err.line - 1].lstrip().startswith("- port")


def test_every_value_name_has_a_label_in_every_language():
    # a missing label falls back to English: "exit code -9" inside a Japanese answer
    assert [(lang, k) for lang in LANGS for k in FACT_NAMES if f"fact.{k}" not in MESSAGES[lang]] == []


def test_a_japanese_question_about_a_killed_job_reads_its_exit_code_and_cancel_reason_in_japanese(matcher: Matcher):
    text = (
        "学習が途中で止まりました。原因は何でしょうか？\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "  exitcode  : -9 (pid: 4242)\n"
        "slurmstepd: error: *** JOB 4411 ON gpu-a07 CANCELLED AT 2026-11-24T10:00:00 DUE TO TIME LIMIT ***"
    )
    diagnosis = matcher.diagnose(text)
    shown = {m.entry_id: texts(compact_blocks(m, diagnosis.lang)) for m in diagnosis.matches}
    assert "終了コード -9" in shown["host-oom-killed"] and "exit code" not in shown["host-oom-killed"]
    assert "キャンセル理由 DUE TO TIME LIMIT" in shown["slurm-time-limit"]


def test_named_groups_leave_the_candidate_stage_picking_the_same_lines():
    # one regex found through its required literal, one with no literal (an RE2 shard), both named
    stage = CandidateStage([], [], [r"SeqNum=(?P<seq>\d+), OpType=(?P<collective>\w+)", r"(?P<port>\d{5}) (a|b)c"])
    block = b"fine\nWorkNCCL(SeqNum=7, OpType=ALLREDUCE)\nport 29500 bc\nfine again\n"
    assert stage.line_starts(block) == [5, 42]


def test_the_terminal_says_the_same_values_as_slack(matcher: Matcher):
    line = f"[rank2]: {OOM_HEAD} Process 48211 has 61.00 GiB memory in use. Including non-PyTorch memory, this process has 17.08 GiB memory in use."
    shown = render_match(matcher.diagnose(line).matches[0])
    assert "says: another process, PID 48211, holds 61.00 GiB on GPU 2 — see gpu-zombie-process" in shown
