"""Two exact errors in one text: the one whose failure explains the other is answered first.

PyTorch's NCCL watchdog prints the same teardown lines for any failed collective ("Some NCCL operations have
failed or timed out", "watchdog thread terminated with exception"), a timeout or an NCCL error. Which entry
explains which is read from the entries' own examples (``tracebot.matcher.explains``), not from their
priorities: lead13 ordered two exact hits by priority and put ``nccl-system-error-gpu-memory`` (60) before
``nccl-network-hang`` (55) on one of the latter's own examples. The teardown lines are written from
ProcessGroupNCCL.cpp's and NCCL's format strings, with made-up values.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import KNOWLEDGE
from tests.support import entry_dict, write_kb
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher
from tracebot.matcher.index import CompiledKB
from tracebot.matcher.loading import load_matcher
from tracebot.matcher.ranking import rank
from tracebot.result import Match

TEARDOWN = [
    "[rank3]:[E305 01:02:03.000000000 ProcessGroupNCCL.cpp:681] [Rank 3] Some NCCL operations have failed or timed out. "
    "Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[rank3]:[E305 01:02:03.000000000 ProcessGroupNCCL.cpp:695] [Rank 3] To avoid data inconsistency, we are taking "
    "the entire process down.",
]
REMOTE = [
    "[rank3]:[E305 01:02:03.000000000 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group "
    "watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, "
    "NCCL version 2.21.5",
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    "Last error:",
    "socketProgressOpt: Call to recv from 10.0.0.12<50211> failed : Connection reset by peer",
]


def test_the_knowledge_base_says_a_remote_error_explains_the_watchdogs_teardown():
    _kb, matcher, _errors = load_matcher(KNOWLEDGE, model=False)
    explains = matcher.index.explains
    assert "nccl-watchdog-timeout" in explains["nccl-remote-error"]
    assert "nccl-system-error-gpu-memory" in explains["nccl-network-hang"]
    assert "nccl-watchdog-timeout" not in explains  # the teardown explains nothing: it follows any failure


def test_a_remote_error_inside_the_watchdogs_teardown_is_answered_first():
    _kb, matcher, _errors = load_matcher(KNOWLEDGE)
    d = matcher.diagnose("\n".join(TEARDOWN + REMOTE))
    confident = [m for m in d.matches if m.confident]
    assert [m.entry_id for m in confident[:2]] == ["nccl-remote-error", "nccl-watchdog-timeout"]
    assert confident[1].explained_by == ["nccl-remote-error"]


def test_the_teardown_alone_is_still_the_watchdog():
    _kb, matcher, _errors = load_matcher(KNOWLEDGE)
    d = matcher.diagnose("\n".join(TEARDOWN))
    assert d.best.entry_id == "nccl-watchdog-timeout" and d.best.confident and d.best.explained_by == []


def test_in_a_long_log_the_remote_error_still_leads_the_teardown():
    # past the ranking model's limit: the line rules order it
    steps = [f"[rank3]: step {i} loss 2.{i % 10}" for i in range(300)]
    d = Matcher(load_knowledge_base(KNOWLEDGE)[0], model=False).diagnose("\n".join(steps + TEARDOWN + REMOTE))
    ids = [m.entry_id for m in d.matches]
    assert ids.index("nccl-remote-error") < ids.index("nccl-watchdog-timeout")


def _derived(tmp_path: Path, entries: list[dict]) -> dict[str, tuple[str, ...]]:
    kb, errors = load_knowledge_base(write_kb(tmp_path / "kb", entries))
    assert not errors
    return CompiledKB(kb).explains


def test_an_example_holding_anothers_line_makes_its_entry_the_explainer(tmp_path):
    got = _derived(tmp_path, [
        entry_dict("socket-broke", examples={"match": ["socket-broke happened\nsystem-error happened"]}),
        entry_dict("system-error"),
    ])
    assert got == {"socket-broke": ("system-error",)}


def test_examples_that_hold_each_other_explain_nothing(tmp_path):
    got = _derived(tmp_path, [
        entry_dict("one", examples={"match": ["one happened\ntwo happened"]}),
        entry_dict("two", examples={"match": ["two happened\none happened"]}),
    ])
    assert got == {}


def test_a_symptom_never_explains_a_root_cause(tmp_path):
    got = _derived(tmp_path, [
        entry_dict("timeout", role="symptom", examples={"match": ["timeout happened\noom happened"]}),
        entry_dict("oom"),
    ])
    assert got == {}


def test_a_cycle_of_three_explains_nothing(tmp_path):
    got = _derived(tmp_path, [
        entry_dict("aa", examples={"match": ["aa happened\nbb happened"]}),
        entry_dict("bb", examples={"match": ["bb happened\ncc happened"]}),
        entry_dict("cc", examples={"match": ["cc happened\naa happened"]}),
        entry_dict("dd", examples={"match": ["dd happened\naa happened"]}),
    ])
    assert got == {"dd": ("aa",)}


def _m(entry_id: str, *, confident: bool = True, explained_by: tuple[str, ...] = ()) -> Match:
    return Match(entry_id=entry_id, title=entry_id, score=92.0 if confident else 60.0, confident=confident,
                 explained_by=list(explained_by))


def test_the_explainer_takes_the_place_of_what_it_explains_and_the_rest_keeps_its_order():
    # rank keeps the given order of equal keys: the sort is stable
    ranked = rank([_m("teardown", explained_by=("remote",)), _m("other"), _m("remote")])
    assert [m.entry_id for m in ranked] == ["remote", "teardown", "other"]


def test_an_explainer_that_is_not_confident_stays_below_a_confident_answer():
    ranked = rank([_m("teardown", explained_by=("remote",)), _m("remote", confident=False)])
    assert [m.entry_id for m in ranked] == ["teardown", "remote"]


def test_a_cycle_in_the_marks_still_ranks_every_match_once():
    ranked = rank([_m("aa", explained_by=("bb",)), _m("bb", explained_by=("aa",)), _m("cc")])
    assert sorted(m.entry_id for m in ranked) == ["aa", "bb", "cc"] and len(ranked) == 3


def test_in_a_long_log_the_socket_failure_explains_the_system_error_printed_before_it():
    # NCCL's misc/socket.cc and PyTorch's NCCLUtils format strings; rank 1's error code shows before rank 0's
    # WARN line says why. By line alone the system error (priority 60) would lead.
    steps = [f"step {i} loss 2.{i % 10}" for i in range(300)]
    lines = steps + [
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "node-a:811:811 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.2.3<46417> failed : "
        "Connection refused",
    ]
    d = Matcher(load_knowledge_base(KNOWLEDGE)[0], model=False).diagnose("\n".join(lines))
    assert [m.entry_id for m in d.matches[:2]] == ["nccl-network-hang", "nccl-system-error-gpu-memory"]
    assert d.matches[1].explained_by == ["nccl-network-hang"]


def test_a_pattern_that_fires_on_the_entrys_own_words_explains_nothing(tmp_path):
    # the other entry claims the example's line (kb lint reports the theft); it is no error beside it
    got = _derived(tmp_path, [
        entry_dict("victim"),
        entry_dict("thief", recognise={"anchors": ["victim happened"]}, examples={"match": ["thief line"]}),
    ])
    assert got == {}
