"""Holds the current knowledge base and matcher; reloads when files under ``knowledge/`` change.

A reload that reports errors keeps the last good knowledge base and exposes the errors (the App Home
and the log show them), so one broken pull request never silences tracebot. A reload whose model fails to
train does the same, and is tried again with backoff (:data:`RETRY_S`, :data:`RETRIES`) though no file changed. Change detection polls
file mtimes and sizes: cheap for a few hundred files, and works on every filesystem.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracebot.config import DEFAULT_THRESHOLD
from tracebot.matcher import Matcher
from tracebot.matcher.loading import load_compiled, matcher_of

log = logging.getLogger(__name__)

Snapshot = dict[str, tuple[int, int]]
# A reload whose model fails to train (out of memory, a crashed helper) is tried again with nothing changed:
# after RETRY_S, then twice as long each time, RETRIES times; then only a change under knowledge/ tries again.
RETRY_S = 30.0
RETRIES = 6


@dataclass
class Loaded:
    kb: Any  # tracebot.knowledge.loader.KnowledgeBase
    matcher: Any  # tracebot.matcher.Matcher
    errors: list[Any] = field(default_factory=list)  # errors of the latest load attempt
    loaded_at: float = field(default_factory=time.time)
    version: int = 1
    rejected: bool = False  # the latest attempt broke something new; ``kb`` is the last good one
    accepted_errors: list[Any] = field(default_factory=list)  # errors the knowledge base in use has


def _problem(error: Any) -> tuple[str, str]:
    """A load problem without its line: its file and what is wrong (a ``LoadError``; a loader's own
    failure is a string)."""
    return (str(getattr(error, "path", "")), str(getattr(error, "message", error)))


class _FromCache:
    """The default loader and matcher factory: the knowledge base and its built matcher from the matcher
    cache (:mod:`tracebot.matcher.loading`), so a restart or a reload of an unchanged knowledge base
    builds nothing."""

    def __init__(self) -> None:
        self._last: tuple[Any, Any] | None = None  # (kb, compiled index)

    def load(self, directory: Path) -> tuple[Any, list[Any]]:
        kb, errors, index = load_compiled(Path(directory))
        self._last = (kb, index)
        return kb, errors

    def matcher(self, kb: Any, threshold: float) -> Any:
        if self._last is not None and self._last[0] is kb:
            return matcher_of(kb, self._last[1], threshold)
        return Matcher(kb, threshold=threshold)


class KnowledgeHolder:
    def __init__(
        self,
        directory: Path,
        threshold: float = DEFAULT_THRESHOLD,
        loader: Callable[[Path], tuple[Any, list[Any]]] | None = None,
        matcher_factory: Callable[[Any, float], Any] | None = None,
        *,
        retry_s: float = RETRY_S,
        retries: int = RETRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = Path(directory)
        self.threshold = threshold
        default = _FromCache()
        self._loader = loader or default.load
        self._matcher_factory = matcher_factory or default.matcher
        self._lock = threading.Lock()
        self._snapshot: Snapshot = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_s, self._retries, self._clock = retry_s, retries, clock
        self._failures = 0  # model trainings failed since the files last changed
        self._retry_at: float | None = None  # when to try the failed training again (clock's time)
        self._state = self._load(previous=None)

    @property
    def current(self) -> Loaded:
        return self._state

    @property
    def kb(self) -> Any:
        return self._state.kb

    @property
    def matcher(self) -> Any:
        return self._state.matcher

    @property
    def errors(self) -> list[Any]:
        return list(self._state.errors)

    def _scan(self) -> Snapshot:
        snap: Snapshot = {}
        if not self.directory.is_dir():
            return snap
        for path in self.directory.rglob("*"):
            try:
                if path.is_symlink():  # never followed by the loader, which names it: its making or retargeting counts
                    st = path.lstat()
                    snap[str(path)] = (st.st_mtime_ns, st.st_size)
                elif path.is_file():
                    st = path.stat()
                    snap[str(path)] = (st.st_mtime_ns, st.st_size)
            except OSError:  # deleted between listing and stat: the next scan sees it gone
                continue
        return snap

    def _load(self, previous: Loaded | None) -> Loaded:
        self._snapshot = self._scan()
        try:
            kb, errors = self._loader(self.directory)
        except Exception as exc:  # the loader should not raise, but a bug there must not kill the bot
            log.exception("knowledge base failed to load from %s", self.directory)
            errors, kb = [f"{self.directory}: loader failed: {exc}"], None
        for err in errors:
            log.error("knowledge base: %s", err)
        # Problems the knowledge base in use already has (e.g. a dangling "related" id) must not block
        # every later reload; only a change that breaks something new is refused. A problem is the same one
        # wherever its line moved to (an edit above it in its file moves it, and breaks nothing).
        known = Counter(map(_problem, previous.accepted_errors)) if previous else Counter()
        empty = kb is None or not kb.entries  # a bot with no entries answers nothing: never accepted
        if previous is not None and (empty or Counter(map(_problem, errors)) - known):
            log.error("keeping the last good knowledge base (%d entries)", len(previous.kb.entries))
            return dataclasses.replace(previous, errors=list(errors), rejected=True)
        if empty:
            reason = errors[0] if errors else "no entries"
            raise RuntimeError(f"cannot load the knowledge base from {self.directory}: {reason}")
        version = previous.version + 1 if previous else 1
        try:
            matcher = self._matcher_factory(kb, self.threshold)  # trains the ranking model (the reload's)
        except Exception as exc:  # noqa: BLE001 — at start there is nothing to keep: it raises
            if previous is None:
                raise
            return dataclasses.replace(previous, errors=[*errors, self._training_failed(exc)], rejected=True)
        self._failures, self._retry_at = 0, None
        if previous is not None and previous.rejected:  # the operator saw "keeping the last good": say it is over
            log.warning("knowledge base reloaded (%d entries): the change that was refused is fixed", len(kb.entries))
        return Loaded(kb, matcher, list(errors), time.time(), version, False, list(errors))

    def _training_failed(self, exc: Exception) -> str:
        """Log the failed training, schedule its retry (or give up) and say so, for :attr:`errors`."""
        self._failures += 1
        what = f"model training failed: {type(exc).__name__}: {exc}"
        if self._failures <= self._retries:
            delay = self._retry_s * 2 ** (self._failures - 1)
            self._retry_at = self._clock() + delay
            what += f" (retry {self._failures} of {self._retries} in {delay:.0f} s)"
        else:
            self._retry_at = None
            what += f" (gave up after {self._retries} retries; a change under knowledge/ tries again)"
        log.error("knowledge base reload: %s; keeping the last good knowledge base", what, exc_info=exc)
        return what

    def reload_if_changed(self) -> bool:
        """Reload when any file was added, removed or modified, or when a failed model training is due to
        be tried again; True if a reload was attempted."""
        with self._lock:
            changed = self._scan() != self._snapshot
            if not changed and (self._retry_at is None or self._clock() < self._retry_at):
                return False
            if changed:
                self._failures = 0  # other files: their own retries
            self._retry_at = None
            self._state = self._load(previous=self._state)
            return True

    def watch(self, interval_s: float = 2.0) -> None:
        """Poll in a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval_s):
                try:
                    self.reload_if_changed()
                except Exception:
                    log.exception("knowledge base reload failed")

        self._thread = threading.Thread(target=loop, name="kb-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
