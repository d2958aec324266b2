"""A piece of work done in two halves at once: one by this process, the other by a forked copy of it.

The training helper (:mod:`tracebot.matcher.train_child`) computes the training rows after its parent's
"go" while the parent, waiting for the model, leaves its core idle: half of the rows (each text's are
computed alone, so either process gives the same floats) are computed by a copy of the helper made by
``fork`` (copy-on-write: the fitted spaces are not copied, nor pickled), which hands them back through a
pipe. Anything that goes wrong with the copy (no fork, it died, a torn pipe) only means this process
computes that half too.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def in_two(work: Callable[[Sequence[int]], list[T]], first: Sequence[int], second: Sequence[int]) -> list[T]:
    """``work(first) + work(second)``, ``work(second)`` computed by a forked copy of this process meanwhile.
    ``work`` must change nothing this process reads afterwards (the copy's changes are lost) and its
    results must pickle."""
    if not second:
        return work(first)
    try:
        read, write = os.pipe()
    except OSError:
        return work(first) + work(second)
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return work(first) + work(second)
    if pid == 0:  # the copy: its half into the pipe, then gone without running anything of its parent's
        code = 1
        try:
            os.close(read)
            # The helper's standard output tells tracebot that the model is stored when it closes: a copy that
            # outlived its parent must not hold it open; nor read the parent's instructions.
            for fd in (0, 1):
                with contextlib.suppress(OSError):
                    os.close(fd)
            data = _encode(work(second))
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    mine = work(first)
    theirs: list[T] | None = None
    with os.fdopen(read, "rb") as got:
        data = got.read()  # the end of input: the copy wrote its half and closed the pipe, or it died
    with contextlib.suppress(ChildProcessError):
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            with contextlib.suppress(Exception):  # torn: computed here
                theirs = pickle.loads(data)  # noqa: S301 — written by this process's own copy, through its own pipe
    if theirs is None or len(theirs) != len(second):
        theirs = work(second)
    return mine + theirs


def _encode(results: list) -> bytes:
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)
