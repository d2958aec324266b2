"""Work split between this process and a forked copy of it (:mod:`tracebot.matcher.halves`): the same
results in the same order, whatever happens to the copy."""

from __future__ import annotations

import os
import signal

import pytest

from tracebot.matcher import halves


def _squares(only):
    return [(i * i, os.getpid()) for i in only]


def test_the_second_half_is_computed_by_another_process_and_the_results_keep_their_order():
    got = halves.in_two(_squares, range(5), range(5, 9))
    assert [v for v, _ in got] == [i * i for i in range(9)]
    assert {pid for _, pid in got[:5]} == {os.getpid()}
    assert os.getpid() not in {pid for _, pid in got[5:]}  # computed meanwhile by the copy


def _dies_in_the_copy(parent: int):
    def work(only):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)  # the OOM killer, say
        return _squares(only)

    return work


def _torn(data: bytes) -> bytes:
    return data[: len(data) // 2]


@pytest.mark.parametrize("fate", ["killed", "torn", "unpicklable"])
def test_a_copy_that_dies_or_hands_back_a_torn_half_leaves_this_process_to_compute_it(monkeypatch, fate):
    parent = os.getpid()
    work = _squares
    if fate == "killed":
        work = _dies_in_the_copy(parent)
    elif fate == "torn":  # the copy's pickle cut in half (the pipe torn): status 0, unreadable data
        real = halves._encode
        monkeypatch.setattr(halves, "_encode", lambda r: _torn(real(r)) if os.getpid() != parent else real(r))
    else:

        def work(only):  # a result that does not pickle: the copy ends with nothing written
            return [(i * i, parent if os.getpid() == parent else (lambda: None)) for i in only]

    got = halves.in_two(work, range(3), range(3, 7))
    assert [v for v, _ in got] == [i * i for i in range(7)]
    assert {pid for _, pid in got} == {parent}  # every half this process's own in the end


def test_the_copy_holds_neither_standard_input_nor_output_of_the_helper_it_was_forked_from():
    # the training helper's parent goes on when the helper's standard output closes (trainer.Helper.wait):
    # a copy still holding it (were the helper killed meanwhile) would keep the parent waiting
    def fds(only):
        held = []
        for fd in (0, 1):
            try:
                os.fstat(fd)
                held.append(fd)
            except OSError:
                pass
        return [(i, held, os.getpid()) for i in only]

    got = halves.in_two(fds, range(1), range(1, 2))
    assert got[1][2] != os.getpid() and got[1][1] == []
