"""Training the ranking model beside the process that needs it, on the machine's other core.

A cold start (nothing cached) used to do everything in one process, one thing after the other: parse
the knowledge base and build the matcher (~1 s at 1,000 entries), import scikit-learn and SciPy (~0.9 s),
train (~1.3 s). Importing the training code (SciPy since the eleventh round, ~0.4 s; scikit-learn was
~0.55 s more) needs nothing from the knowledge base, so :func:`start` launches
a child process (:mod:`tracebot.matcher.train_child`) while the parent is still parsing; the child imports the training code.
As the parent parses it hands the child each entry (:meth:`Helper.entry`, a batch at a time), and the
child does with each what needs no other entry; between parsing and building the matcher the parent says
that the knowledge base is parsed (:meth:`Helper.hand`), and the child fits the TF-IDF spaces on the
entries while the parent builds the matcher (at 1,000 entries the fit is about as long as the build).
Once the matcher is built the parent gathers the training texts' evidence with it and hands it over
(:meth:`Helper.ahead`), and the child trains and stores the model at once, exactly as the parent would have,
while the parent stores the matcher in the cache and reads the text; the child then ends. When a text first
needs the model (the matcher defers it: a long log never does) and it is not stored yet, :meth:`Helper.go`
tells the child so and the parent waits for it; then it loads the model from the cache. When the evidence
could not be handed over ahead, "go" has the child load that matcher from the cache and train
(:func:`tracebot.matcher.loading.matcher_of`), while the parent, idle otherwise, gathers the evidence and
hands it over (:meth:`Helper.evidence`) as the child computes the parts of the rows that need none. A child never told
to go ends itself after :data:`IDLE_S`, or is ended (:meth:`Helper.stop`) when its matcher is dropped or the
parent exits, whichever comes first; a thread reaps it whenever it ends. The child closes its standard
output once the model is stored, and the parent goes on from there, not from the child's end. Anything that goes
wrong (no cache, a crash, a timeout) only means the parent trains as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracebot.config import TRAIN_HELPER_ENV, env_switch
from tracebot.knowledge.cache import cache_file, drop_temporaries

if TYPE_CHECKING:
    import subprocess
    import threading
    from collections.abc import Callable

    from tracebot.knowledge.entry import Entry
    from tracebot.knowledge.loader import KnowledgeBase
    from tracebot.matcher.core import Matcher

# off: never (the child sets "0" for itself), on: always; unset: when a core is free. Read as every switch is.
HELPER_ENV = TRAIN_HELPER_ENV
TIMEOUT_S = 120.0  # a child still training after this is stopped, and the parent trains (~40x a cold start)
# A child never told to go ends itself after this (its prepared TF-IDF spaces are ~100 MB at 1,000 entries): a
# console or a bot that got no short text for ten minutes pays the training itself when one comes.
IDLE_S = 600.0
BATCH = 25  # entries handed over at a time while the parent parses (Helper.entry)
# How the child's memory is given to it. Measured on an idle 2-core machine (a 1,000-entry cold paste, the child's
# fit of the TF-IDF spaces on the entries handed over, CPU seconds): 0.42-0.90 s, 0.58-0.87 s in most runs, with
# the defaults; 0.47-0.48 s in every run with these. NumPy advises the kernel to back its large arrays with huge
# pages, and where the kernel then compacts memory to find them (transparent huge pages "madvise", its default
# defrag setting) the fit stalls for up to 0.4 s; glibc hands each large array fresh pages from mmap and gives them
# back when it is freed, and the fit's arrays, allocated and freed by the hundred, fault their pages in again each
# time: kept in the heap instead (a short-lived process: what it frees is reused, and returned when it ends). The
# arithmetic is the same (the model file is byte-identical).
MEMORY_ENV = {
    "NUMPY_MADVISE_HUGEPAGE": "0",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str(1 << 32),
}


class Helper:
    """A started child process (see the module's docstring)."""

    def __init__(self, proc: subprocess.Popen[bytes], matcher_file: Path):
        import queue
        import threading

        self.proc = proc
        self.matcher_file = matcher_file
        self.going = False
        # Everything for the child goes through one queue, written in order by one thread (:meth:`_send`): the
        # child reads the entries only once it has imported the training code, and a pipe holds 64 KB.
        self._queue: queue.SimpleQueue[bytes | threading.Event | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._broken = False  # a write failed: the child is gone (or stopped); nothing more is written
        self._closed = False  # the input's end is queued: nothing more is sent
        self._batch: list[Entry] = []  # entries parsed, not yet pickled
        self._sent: list[Entry] | None = []  # entries handed over, in order (None: handing them failed)
        self._handed = False  # the parsed knowledge base was handed over (the child prepares its model)
        self._evidence = False  # the training texts' evidence was handed over (the child trains at once)
        # A thread blocked in waitpid reaps the child the moment it ends, whoever ended it (it finished, it
        # was told to stop, it gave up idle, the OOM killer): never a zombie while the matcher lives; and
        # :meth:`wait` wakes at once (Popen.wait with a timeout polls, and noticed the end up to 50 ms late).
        self._ended = threading.Event()
        # Set when the child closes its standard output, which it does once the model is stored, just
        # before it exits (or when it ends, whatever ended it): :meth:`wait` need not wait for the kernel
        # to tear down the child's few hundred MB (~0.04 s), which overlaps the parent's loading of the model.
        self._done = threading.Event()
        threading.Thread(
            target=_reap, args=(proc, self._done, self._ended), name="train-helper-reaper", daemon=True
        ).start()

    def entry(self, entry: Entry) -> None:
        """One more parsed entry, as the knowledge base will hold it (after its file is parsed and checked):
        handed to the child :data:`BATCH` at a time while the parse goes on, so that it does with each
        what needs no other entry (:class:`tracebot.matcher.training.Streamed`) meanwhile."""
        self._batch.append(entry)
        if len(self._batch) >= BATCH:
            self._hand_batch()

    def _hand_batch(self) -> None:
        if not self._batch or self._broken or self._sent is None:
            return
        import pickle

        try:
            data = pickle.dumps(self._batch, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 — no more entries one by one: all of them in :meth:`hand`, or none
            self._sent = None
            return
        self._sent += self._batch
        self._batch = []
        self._send(b"entries %d\n" % len(data), data)

    def hand(self, kb: KnowledgeBase, model_key: str) -> None:
        """Tell the child that the knowledge base is parsed: its entries (those :meth:`entry` handed over, or
        all of them now when they were not these) and silence texts, whose model's cache key is
        ``model_key``. The child fits the TF-IDF spaces while this process builds the matcher, the half of
        training that needs no matcher (:func:`tracebot.matcher.training.prepare`). Nothing when that
        model is cached already."""
        self._hand_batch()
        model_file = cache_file("model", model_key)
        if model_file is None or model_file.is_file() or self._broken:
            return
        import pickle

        # the entries handed over are the knowledge base's (the same objects, in order): their number says so
        handed = len(self._sent) if self._sent == kb.entries else kb.entries
        try:
            data = pickle.dumps((model_key, handed, kb.silence), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 — only the head start is lost: the child prepares after "go"
            return
        self._send(b"kb %d\n" % len(data), data)
        self._handed = True

    def ahead(self, bare: Callable[[], Matcher]) -> None:
        """The matcher is built (not yet stored; ``bare()`` makes it without a model): gather the training texts' evidence with it now
        and hand it over, so that the child trains and stores the model at once, while this process stores
        the matcher and reads its text, rather than after a text first needs the model (:meth:`go`). Only
        when the child was handed this knowledge base (:meth:`hand`: its model is not cached): a start that
        ends up needing no model (a long log) costs this process the gathering (~0.15 s at 1,000 entries),
        the other core the training. Anything that goes wrong leaves it to :meth:`evidence`."""
        if not self._handed or self._broken or self._closed:
            return
        try:
            data = self._gathered(bare())
        except Exception:  # noqa: BLE001 — gathered again after "go" (evidence)
            return
        self._send(b"evidence %d\n" % len(data), data)
        self._evidence = True

    def _send(self, *items: bytes | threading.Event | None) -> None:
        """Queue ``items`` for the child's input: bytes are written, an event is set once what came before it
        is written (or could not be), ``None`` closes the input."""
        import threading

        if self._closed:
            return
        if self._writer is None:
            self._writer = threading.Thread(target=self._write, name="train-helper-writer", daemon=True)
            self._writer.start()
        for item in items:
            self._queue.put(item)
        self._closed = None in items

    def _write(self) -> None:
        stdin = self.proc.stdin
        while True:
            item = self._queue.get()
            if isinstance(item, bytes):
                if not self._broken:
                    try:
                        stdin.write(item)  # type: ignore[union-attr]
                        if self._queue.empty():
                            stdin.flush()  # type: ignore[union-attr]
                    except (OSError, ValueError):  # the child ended (or was stopped): the parent trains
                        self._broken = True
            elif item is None:
                with contextlib.suppress(OSError, ValueError):
                    stdin.close()  # type: ignore[union-attr]
                return
            else:
                with contextlib.suppress(OSError, ValueError):
                    stdin.flush()  # type: ignore[union-attr]
                item.set()

    def go(self, model_file: Path) -> None:
        """Have the child train the model into ``model_file`` (the model's cache file); nothing when the
        model is cached already or the parent could not store the matcher. Then :meth:`evidence`, and
        :meth:`wait` waits for it."""
        import threading

        stdin = self.proc.stdin
        if model_file.is_file() or not self.matcher_file.is_file() or stdin is None or self._broken or self._closed:
            return
        # the matcher's and the model's cache keys (their files' names): the child need not hash every file
        # again to find the matcher, nor load it to know which model it trains
        keys = (f.stem.partition("-")[2] for f in (self.matcher_file, model_file))
        written = threading.Event()
        self._send("go {} {}\n".format(*keys).encode(), written)
        # written after the entries, whole; a child that reads nothing within the bound: the parent trains
        if written.wait(TIMEOUT_S) and not self._broken:
            self.going = True

    def evidence(self, matcher: Matcher) -> None:
        """Gather the training texts' evidence with this process's ``matcher`` (the one the child loads
        from the cache; this process would otherwise wait idle) and hand it to the child, which meanwhile
        computes what needs none; then close the child's input. The child gathers whatever it lacks."""
        chunks: tuple[bytes, ...] = ()
        try:
            if self.going and not self._evidence:  # handed over ahead (:meth:`ahead`): not again
                data = self._gathered(matcher)
                chunks = (b"evidence %d\n" % len(data), data)
        except Exception:  # noqa: BLE001, S110 — the child gathers it itself
            pass
        # Written by the writer thread, as the entries: the child reads it only when its rows need it, and a
        # hung child that never does would block this process in the write (a pipe holds 64 KB) with no
        # timeout; :meth:`wait`'s deadline bounds it, and :meth:`stop` ends the child and joins the thread.
        self._send(*chunks, None)

    @staticmethod
    def _gathered(matcher: Matcher) -> bytes:
        """The training texts' evidence (:func:`tracebot.matcher.samples.gathered`) with ``matcher``, pickled."""
        import pickle

        from tracebot.matcher.samples import gathered, training_texts

        samples = training_texts(matcher.index.entries, (), (), (), matcher.silence)[0]
        return pickle.dumps(gathered(samples, matcher.evidence_of), protocol=pickle.HIGHEST_PROTOCOL)

    def wait(self) -> None:
        """Wait for the child told to :meth:`go` (until it has stored the model and closed its output, or
        ended, or :data:`TIMEOUT_S` passed; then the parent trains what is not stored)."""
        if self.going:
            self._done.wait(TIMEOUT_S)

    def stop(self) -> None:
        """End the child if it still runs (its work is no longer needed) and wait until it is reaped. A
        child that has closed its output is ending by itself (its model stored): it is only waited for, as
        a killed one would be (killed, it ended with -9 whenever this process loaded the model faster than
        the kernel freed the child's memory)."""
        killed = not self._ended.is_set() and not self._done.is_set()
        if killed:
            with contextlib.suppress(OSError):
                self.proc.kill()
        if self._writer is not None:  # its write fails now that the child is gone
            self._broken = True
            self._closed = True
            self._queue.put(None)
            self._writer.join(10)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        if self._ended.wait(10) and killed:  # reaped: its pid names only what it left half-written
            drop_temporaries(self.matcher_file.parent, self.proc.pid)


def _reap(proc: subprocess.Popen[bytes], done: threading.Event, ended: threading.Event) -> None:
    if proc.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            proc.stdout.read()  # the child writes nothing: this returns when it closes its output or ends
            proc.stdout.close()
        done.set()
    with contextlib.suppress(OSError):  # (ECHILD: someone else reaped it; returncode is set either way)
        proc.wait()
    done.set()
    ended.set()


def core_free() -> bool:
    """Whether a core is likely idle: the last minute's load average leaves one. On a machine already
    busy with other work a second process only competes with this one (measured on 2 cores at a load of
    ~6: a cold start 1.6 s slower with the helper than without)."""
    try:
        return os.getloadavg()[0] <= len(os.sched_getaffinity(0)) - 1  # the cores this process may use
    except OSError:
        return False


def start(matcher_file: Path | None) -> Helper | None:
    """A child ready to train the model once its matcher is in ``matcher_file``, or
    ``None`` when there is nothing to gain: no cache to hand the matcher over (``matcher_file`` is
    ``None``), the matcher already cached (so, most likely, the model too), no idle core, or helpers
    switched off (:data:`HELPER_ENV`)."""
    wanted = env_switch(HELPER_ENV, None)
    if matcher_file is None or matcher_file.is_file() or wanted is False or (wanted is None and not core_free()):
        return None
    import subprocess  # here: a warm start (no helper) need not import it

    env = {**MEMORY_ENV, **os.environ, HELPER_ENV: "0"}  # an explicit memory setting wins
    try:
        proc = subprocess.Popen(  # noqa: S603 — our own module, argv list, no shell
            # -I: isolated. "-m" alone puts the working directory first on the module path, and a caller's
            # working directory (/tmp, a job's directory) may hold a planted "tracebot" package; -I also
            # ignores PYTHON* variables and the user's site-packages. It starts in "/" for the same reason.
            [sys.executable, "-I", "-m", "tracebot.matcher.train_child", f"{IDLE_S:g}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,  # closed by the child once the model is stored (Helper.wait)
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
        )
    except OSError:
        return None
    return Helper(proc, matcher_file)
