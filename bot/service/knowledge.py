"""Holds the current knowledge base and matcher; reloads when files under ``knowledge/`` change.

A reload that reports errors keeps the last good knowledge base and exposes the errors (the App Home
and the log show them), so one broken pull request never silences tracebot. Change detection polls
file mtimes and sizes: cheap for a few hundred files, and works on every filesystem.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracebot.config import DEFAULT_THRESHOLD
from tracebot.matcher import Matcher
from tracebot.matcher.loading import load_compiled, matcher_of

log = logging.getLogger(__name__)

Snapshot = dict[str, tuple[int, int]]


@dataclass
class Loaded:
    kb: Any  # tracebot.knowledge.loader.KnowledgeBase
    matcher: Any  # tracebot.matcher.Matcher
    errors: list[Any] = field(default_factory=list)  # errors of the latest load attempt
    loaded_at: float = field(default_factory=time.time)
    version: int = 1
    rejected: bool = False  # the latest attempt broke something new; ``kb`` is the last good one
    accepted_errors: list[Any] = field(default_factory=list)  # errors the knowledge base in use has


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
                if path.is_file():
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
        # every later reload; only a change that breaks something new is refused.
        known = {str(e) for e in previous.accepted_errors} if previous else set()
        empty = kb is None or not kb.entries  # a bot with no entries answers nothing: never accepted
        if previous is not None and (empty or {str(e) for e in errors} - known):
            log.error("keeping the last good knowledge base (%d entries)", len(previous.kb.entries))
            return dataclasses.replace(previous, errors=list(errors), rejected=True)
        if empty:
            reason = errors[0] if errors else "no entries"
            raise RuntimeError(f"cannot load the knowledge base from {self.directory}: {reason}")
        version = previous.version + 1 if previous else 1
        matcher = self._matcher_factory(kb, self.threshold)
        return Loaded(kb, matcher, list(errors), time.time(), version, False, list(errors))

    def reload_if_changed(self) -> bool:
        """Reload when any file was added, removed or modified; True if a reload was attempted."""
        with self._lock:
            if self._scan() == self._snapshot:
                return False
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
