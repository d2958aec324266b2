"""A number that names an error meets the entry that names it: "exit status -9" is a SIGKILL, NCCL's "value 5"
is ncclInvalidUsage. A number that is no exit status, signal or NCCL result names nothing."""

from __future__ import annotations

import pytest

from tracebot.matcher import Matcher
from tracebot.matcher.codes import names
from tracebot.matcher.tfidf import word_grams

# Written here, in the forms the sources print (Python's subprocess and torchrun: -N; a shell or a container:
# 128 + N; NCCL's check macros and its proxy: the bare ncclResult_t).
NAMED = [
    ("Occasionally the batch task fails with the exit status of -9.", "sigkill"),
    ("Task failure with -9 exit code", "sigkill"),
    ("the solver spuriously fails with exit code -9 on the CI server", "sigkill"),
    ("my container exited with code 137 during the epoch", "sigkill"),
    ("Process finished with exit code 139", "sigsegv"),
    ("the worker was killed by signal: 11", "sigsegv"),
    ("['python', 'train.py'] exits with return code = -7", "sigbus"),
    ("NCCL Error at /src/comm/exchange.cpp:127 value 5", "ncclinvalidusage"),
    ("proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6", "ncclremoteerror"),
    ("RuntimeError: nccl failed with error code: 2", "ncclsystemerror"),
]


@pytest.mark.parametrize(("text", "name"), NAMED)
def test_a_numbered_error_adds_the_name_it_stands_for(text: str, name: str):
    assert name in names(text.lower())
    assert name in word_grams(text)


def test_a_sigkill_by_number_shares_the_killed_concept():
    assert "≈killed" in word_grams("the job fails with exit code -9")


# near misses: numbers that are no exit status, signal or NCCL result
UNNAMED = [
    "returned non-zero exit status 1.",
    "I trained for 137 epochs and then the exit survey came",
    "NCCL version 2.7.8+cuda10.2",
    "NCCL INFO Channel 05/32 : 0 1 2 3",
    "NET/IB : Got completion from peer with status=12 opcode=1",
    "exit code 0",
    "the job used 9 GPUs and exited normally",
    # InfiniBand's completion status on NCCL's line, not an NCCL result
    "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4711> with error 4, opcode 0",
]


@pytest.mark.parametrize("text", UNNAMED)
def test_a_number_that_is_no_exit_status_or_result_names_nothing(text: str):
    assert names(text.lower()) == []


# Written here: an error told by its number only. On main (054aa13) the first was `rendezvous-timeout` (the
# words "second node"), and `host-oom-killed` was third behind `torchrun-child-failed` and a shared-memory entry.
def test_an_nccl_result_by_number_gets_the_entry_of_that_result(matcher: Matcher):
    d = matcher.diagnose("My allreduce wrapper prints NCCL Error at ops.cu:41 value 2 on the second node, "
                         "what does value 2 mean?")
    assert d.matches and d.matches[0].entry_id == "nccl-system-error-gpu-memory", [m.entry_id for m in d.matches]


def test_an_exit_status_of_minus_9_brings_the_host_oom_entry_up(matcher: Matcher):
    d = matcher.diagnose("The simulation step fails now and then with exit code -9 on the shared build host, "
                         "never on my laptop. Any idea why?")
    assert "host-oom-killed" in [m.entry_id for m in d.matches[:2]], [m.entry_id for m in d.matches]


def test_a_clean_exit_status_stays_silent(matcher: Matcher):
    d = matcher.diagnose("the job finished with exit code 0 after three epochs, thanks")
    assert not d.confident, [m.entry_id for m in d.matches]
