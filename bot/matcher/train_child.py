"""The child process :mod:`tracebot.matcher.trainer` starts: ``python -I -m tracebot.matcher.train_child``.

It imports the training code (SciPy; not scikit-learn, :mod:`tracebot.matcher.logistic`) at once, while its
parent parses the knowledge base, which now takes longer than the import. Its standard input then holds, from the parent:

- ``entries N`` and N bytes (none or more times): a few parsed entries, pickled, the next of the knowledge
  base's in its order, sent as the parent parses; the child does with each what needs no other entry
  (:class:`tracebot.matcher.training.Streamed`) as it comes, and while none waits maps the fit's memory
  ahead (:class:`Prefault`);
- ``kb N`` and N bytes (optional): the model's cache key, the parsed entries (or their number: those
  handed over before, all of them) and the silence texts, pickled, sent between parsing and building the
  matcher; the child fits the TF-IDF spaces on them (:func:`tracebot.matcher.training.prepare`) and
  computes the training rows' parts that need no evidence while the parent builds;
- ``go KEY MODEL_KEY``: the parent has stored the matcher in the cache under KEY and needs its model,
  whose key is MODEL_KEY: the child trains it and stores it. When what it prepared was for that model
  key, from that and the parent's evidence, loading the matcher (~0.07 s at 1,000 entries, on the
  critical path) only for a text whose evidence was not handed over; otherwise from the matcher;
- ``evidence N`` and N bytes (optional): the training texts' matcher evidence, pickled
  (:func:`tracebot.matcher.samples.gathered`), which the parent gathers with the matcher it built. Mostly
  right after ``kb``, once the matcher is built (before "go", while the parent stores it): the child trains
  and stores the model at once, and ends (told "go" meanwhile, it reads it no more: its parent waits for its
  end); a text missing from it, and the child waits for "go" and gathers it with the matcher. Otherwise
  after "go", while the child computes the parts of the training rows that need none (and, without it,
  would rebuild the cached phrase index's vectors to gather it): read when the rows need it; a text
  missing from it is gathered here.

It exits quietly on end of input or on anything else, and by itself when no "go" came within the idle bound
its parent gives it (its first argument, seconds). It writes nothing on its standard output: it closes it
when it is done, the model stored, which is what its parent waits for (the process's own end comes later).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import sys

MAX_KB_BYTES = 1 << 30  # a knowledge base's pickle is ~8 MB at 1,000 entries
IDLE_S = 600.0  # as tracebot.matcher.trainer.IDLE_S, when run without it (by hand, by a test)
PREFAULT_BYTES = 192 << 20  # ~the fit's arrays at 1,000 entries (prefault)


def main() -> int:
    import threading

    # Never told to go within the idle bound (the parent's first argument, seconds): end, and free what was
    # prepared; the parent, should it need the model later, trains it itself.
    idle = threading.Timer(float(sys.argv[1]) if len(sys.argv) > 1 else IDLE_S, os._exit, (0,))
    idle.daemon = True
    idle.start()
    from tracebot.knowledge.cache import cache_dir
    from tracebot.matcher import training  # SciPy: the import this process exists for
    from tracebot.matcher.core import train_ranking_model
    from tracebot.matcher.model import MIN_ENTRIES

    pipe = Pipe(sys.stdin.fileno())
    streamed = training.Streamed()
    told = take_entries(pipe, streamed, Prefault())
    prepared, key, entries, silence = None, None, [], []
    if len(told) == 2 and told[0] == b"kb" and told[1].isdigit() and int(told[1]) <= MAX_KB_BYTES:
        data = pipe.read(int(told[1]))
        key, entries, silence = pickle.loads(data)  # noqa: S301 — written by the parent, through its own pipe
        del data
        if isinstance(entries, int):  # the entries came before, a file's at a time: all of them?
            entries, key = (streamed.entries, key) if entries == len(streamed.entries) else ([], None)
        if key is not None:
            prepared = training.prepare(entries, silence=silence, rows_begun=True, streamed=streamed)
        told = pipe.readline().split()
    del streamed
    handed = Handed(pipe, _not_handed)
    if handed.take(told):  # the evidence, handed over ahead of "go": train now (the matcher is being stored)
        idle.cancel()  # busy, not idle: a model half trained is not left to the parent
        if prepared is not None and len(entries) >= MIN_ENTRIES:
            with contextlib.suppress(LookupError):  # a text's evidence was not handed over: wait for "go"
                train_ranking_model(entries, silence, key, handed, prepared=prepared, prewrite=True)
                return 0  # stored: the parent finds the model in the cache (or is waiting for this to end)
            prepared = None  # spent on the attempt
        told = pipe.readline().split()
    idle.cancel()  # told something: "go" or the end of input
    # "go KEY MODEL_KEY": the matcher is in the cache under KEY, its model's key is MODEL_KEY
    if len(told) != 3 or told[0] != b"go" or not all(re.fullmatch(rb"[0-9a-f]{24}", k) for k in told[1:]) or cache_dir() is None:
        return 0  # end of input (the parent needs nothing) or not what the parent writes: the parent trains
    matcher_key, model_key = (k.decode() for k in told[1:])
    evidence = MatcherEvidence(matcher_key)
    handed.gather = evidence
    if prepared is not None and key == model_key:  # what was prepared serves only the same entries and silence texts
        if len(entries) < MIN_ENTRIES:
            return 0
        with contextlib.suppress(LookupError):  # a text's evidence was not handed over and the matcher is gone
            train_ranking_model(
                entries, silence, model_key, handed, prepared=prepared,
                prewrite=True,  # the parent waits idle meanwhile: its core writes the model's spaces
            )
        return 0
    try:
        matcher = evidence.matcher()
    except LookupError:  # gone meanwhile (pruned): the parent trains
        return 0
    if not matcher.can_train:
        return 0
    handed.gather = matcher.evidence_of
    matcher.train_model(gather=handed, prewrite=True)  # trains and stores
    return 0


class Pipe:
    """The parent's pipe (file descriptor ``fd``), read through this object's own buffer, so that whether
    something is waiting (:meth:`pending`) is known exactly: a buffered reader may hold what ``select``
    no longer sees."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()

    def pending(self) -> bool:
        import select

        return bool(self.buf) or bool(select.select([self.fd], [], [], 0)[0])

    def _fill(self) -> bool:
        chunk = os.read(self.fd, 1 << 16)
        self.buf += chunk
        return bool(chunk)

    def readline(self, limit: int = 200) -> bytes:
        """One line (with its newline; without it at the end of input), or the next ``limit`` bytes."""
        while b"\n" not in self.buf and len(self.buf) < limit and self._fill():
            pass
        cut = self.buf.find(b"\n", 0, limit)
        cut = cut + 1 if cut >= 0 else min(limit, len(self.buf))
        line = bytes(self.buf[:cut])
        del self.buf[:cut]
        return line

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer at the end of input)."""
        chunks, have = [bytes(self.buf[:n])], min(n, len(self.buf))
        del self.buf[:n]
        while have < n:
            chunk = os.read(self.fd, min(n - have, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            have += len(chunk)
        return b"".join(chunks)


def take_entries(pipe: Pipe, streamed, memory: Prefault) -> list[bytes]:
    """Read the ``entries N`` messages the parent writes as it parses, adding each message's entries to
    ``streamed`` (:class:`tracebot.matcher.training.Streamed`: what training does with each entry alone)
    as it comes; whenever the pipe is empty meanwhile, touch the next step of ``memory``. The first line
    that is not such a message, split (empty: the end of input), with the memory touched freed for the fit."""
    try:
        while True:
            while not pipe.pending() and memory.step():
                pass
            told = pipe.readline().split()
            if not (len(told) == 2 and told[0] == b"entries" and told[1].isdigit() and int(told[1]) <= MAX_KB_BYTES):
                return told
            streamed.add(pickle.loads(pipe.read(int(told[1]))))  # noqa: S301 — written by the parent, through its own pipe
    finally:
        memory.release()


class Prefault:
    """Fresh heap memory touched ``step`` bytes at a time (:meth:`step`), up to ``budget``, then freed
    (:meth:`release`).

    The child has imported the training code before a 1,000-entry knowledge base is parsed (its parent is
    still parsing and handing over the entries), and the fit then faults in the pages of its arrays one by
    one. Its allocator keeps what is freed (:data:`tracebot.matcher.trainer.MEMORY_ENV`), so the pages
    touched here while it waits anyway are the fit's, already mapped (measured idle at 1,000 entries: the
    cold paste 1.58 s against 1.67 s, median of six each). One block, touched a step at a time only while
    the pipe is empty: freed, it is one free block the fit's arrays are cut from, and the entries are never
    kept waiting for more than one step."""

    def __init__(self, budget: int = PREFAULT_BYTES, step: int = 16 << 20) -> None:
        self.budget, self.size, self.touched = budget, step, 0
        self.block = None

    def step(self) -> bool:
        """Touch the next step; ``False`` (touching nothing) once the budget is spent."""
        if self.touched + self.size > self.budget:
            return False
        if self.block is None:
            import numpy as np

            self.block = np.empty(self.budget, dtype=np.uint8)  # allocated, not yet mapped
        self.block[self.touched : self.touched + self.size] = 1  # written, so its pages are mapped
        self.touched += self.size
        return True

    def release(self) -> int:
        """Free the memory (back to the heap); the bytes that were touched."""
        self.block = None
        return self.touched


class MatcherEvidence:
    """:meth:`Matcher.evidence_of` of the matcher the parent stored under ``key``, loaded at the first call
    (:meth:`matcher`). Only read under that key, never built: the directory may have changed since the
    parent hashed it, and a matcher of the new files stored under the old files' key would be served for
    them. :class:`LookupError` when it is gone (pruned)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._matcher = None

    def matcher(self):
        if self._matcher is None:
            from tracebot.knowledge.cache import lookup
            from tracebot.matcher.core import Matcher

            found = lookup("matcher", self.key)
            if found is None:
                raise LookupError(f"no matcher under {self.key}")
            kb, _errors, index = found
            self._matcher = Matcher(kb, model=False, index=index)
        return self._matcher

    def __call__(self, text: str, *, phrases: bool = True):
        return self.matcher().evidence_of(text, phrases=phrases)


class Handed:
    """The training texts' evidence as the parent handed it (:meth:`take`: ahead of "go", or read at the first
    text after it), or gathered by ``gather`` (:meth:`Matcher.evidence_of`) for a text it lacks."""

    def __init__(self, pipe: Pipe, gather) -> None:
        self.pipe, self.gather = pipe, gather
        self.got: dict | None = None

    def take(self, told: list[bytes]) -> bool:
        """Read the evidence that the line ``told`` (split) announces; ``False`` when it announces none."""
        if not (len(told) == 2 and told[0] == b"evidence" and told[1].isdigit() and int(told[1]) <= MAX_KB_BYTES):
            return False
        data = self.pipe.read(int(told[1]))
        self.got = {}
        with contextlib.suppress(Exception):  # torn (the parent stopped): gathered here
            self.got = pickle.loads(data)  # noqa: S301 — written by the parent, through its own pipe
        return True

    def __call__(self, text: str, *, phrases: bool = True):
        if self.got is None:
            self.got = {}
            self.take(self.pipe.readline().split())
        found = self.got.get((text, phrases))
        return found if found is not None else self.gather(text, phrases=phrases)


def _not_handed(text: str, *, phrases: bool = True):
    """Before "go" no matcher is known to gather a text the parent's evidence lacks."""
    raise LookupError(text)


if __name__ == "__main__":
    code = main()
    # The model is stored (written and renamed into place) and the parent is waiting: closing standard
    # output tells it so (Helper.wait), before the kernel frees this process's memory (~0.04 s), and
    # os._exit skips tearing down the interpreter (scikit-learn's modules, as it was, the training arrays: ~0.3 s).
    os.close(1)
    os._exit(code)
