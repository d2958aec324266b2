"""tracebot's on-disk cache: results that are slow to build and fully determined by their inputs, stored
under a hash of those inputs (``$TRACEBOT_CACHE``, default ``~/.cache/tracebot``; empty: no cache).

A changed input changes the key, so nothing is ever invalidated by hand; a torn or unreadable file only
means building again. Used for the parsed knowledge base and the trained ranking model."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def cache_dir() -> Path | None:
    where = os.environ.get("TRACEBOT_CACHE")
    if where == "":
        return None
    return Path(where) if where else Path.home() / ".cache" / "tracebot"


def tree_hash(root: Path, extra: Iterable[bytes] = ()) -> str:
    """A hash of every file under ``root`` (names and contents) and of ``extra``: any change under
    ``root`` (an edit, a new file, a rename, a removal) gives another hash."""
    h = hashlib.sha256()
    for part in extra:
        h.update(len(part).to_bytes(8, "little") + part)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        name = str(path.relative_to(root)).encode()
        h.update(len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:24]


def cached(kind: str, key: str, build: Callable[[], T]) -> T:
    """``build()``, or what it returned the last time for this ``kind`` and ``key``."""
    root = cache_dir()
    path = root / f"{kind}-{key}.pkl" if root else None
    if path is not None and path.is_file():
        try:
            with path.open("rb") as f:
                return pickle.load(f)  # noqa: S301 — our own cache file, keyed by content hash
        except Exception:  # noqa: BLE001 — a stale or torn cache file just means building again
            pass
    value = build()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False) as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(f.name, path)
        except OSError:
            pass
    return value
