"""Two exact hits in one paste: the error that says what failed comes before the teardown around it.

PyTorch's NCCL watchdog prints the same teardown lines for any failed collective ("Some NCCL operations have
failed or timed out", "watchdog thread terminated with exception"), a timeout or an NCCL error; the entries'
priorities say which of two exact hits is the more specific. The lines are written from ProcessGroupNCCL.cpp's
and NCCL's format strings, with made-up values.
"""

from __future__ import annotations

from tests.conftest import KNOWLEDGE
from tracebot.matcher.loading import load_matcher

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


def test_a_remote_error_inside_the_watchdogs_teardown_is_answered_first():
    _kb, matcher, _errors = load_matcher(KNOWLEDGE)
    d = matcher.diagnose("\n".join(TEARDOWN + REMOTE))
    confident = [m.entry_id for m in d.matches if m.confident]
    assert confident[:2] == ["nccl-remote-error", "nccl-watchdog-timeout"], confident


def test_the_teardown_alone_is_still_the_watchdog():
    _kb, matcher, _errors = load_matcher(KNOWLEDGE)
    assert matcher.diagnose("\n".join(TEARDOWN)).best.entry_id == "nccl-watchdog-timeout"
