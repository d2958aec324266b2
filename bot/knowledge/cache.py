"""tracebot's on-disk cache: results that are slow to build and fully determined by their inputs, stored
under a hash of those inputs (``$TRACEBOT_CACHE``, default ``~/.cache/tracebot``; empty: no cache).

A changed input changes the key, so nothing is ever invalidated by hand; a torn or unreadable file only
means building again. Cache files are unpickled, so only a folder and files owned by the user reading them
and writable by nobody else are read or written (a shared or planted cache folder means no cache). Used
for the parsed knowledge base (and each entry file's parse), the built matcher and the trained ranking
model."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import mmap
import os
import pickle
import stat
import struct
import tempfile
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from tracebot.folders import make_private

T = TypeVar("T")
log = logging.getLogger(__name__)


def cache_dir() -> Path | None:
    """The cache folder, absolute (a child process started elsewhere finds the same one), or ``None``."""
    where = os.environ.get("TRACEBOT_CACHE")
    if where == "":
        return None
    return Path(where).absolute() if where else Path.home() / ".cache" / "tracebot"


def _private(st: os.stat_result) -> bool:
    """Whether a cache folder or file is this user's alone to write: a cache file is unpickled, so one
    another user could plant or replace would run their code as whoever reads it."""
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _private_folder(folder: Path) -> bool:
    """Whether ``folder`` is a folder (not a link to one) that is this user's alone to write. One that is
    there but not private is named in the log, once: otherwise an operator who warmed the cache as another
    user, or shares it, sees only every start build and train again."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode) and _private(st):
        return True
    if folder not in _said_not_private:
        _said_not_private.add(folder)
        if not stat.S_ISDIR(st.st_mode):
            why = "not a folder (a symbolic link, or a file)"
        elif st.st_uid != os.geteuid():
            why = f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
        else:
            why = f"writable by others (mode {stat.S_IMODE(st.st_mode):o})"
        log.warning("cache folder %s is %s: not used, so the knowledge base is parsed and the ranking model "
                    "trained at every start (cache files are unpickled; TRACEBOT_CACHE names a folder of "
                    "this user's own, or empty for none)", folder, why)
    return False


_said_not_private: set[Path] = set()


def library_versions(names: tuple[str, ...]) -> str:
    """What identifies installed libraries (their module file's size and time), found without importing
    them: a cache key with it changes when one is upgraded."""
    parts = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
            st = os.stat(spec.origin) if spec and spec.origin else None
        except (ImportError, ValueError, OSError):
            st = None
        parts.append(f"{name}={st.st_size}:{st.st_mtime_ns}" if st else f"{name}=-")
    return " ".join(parts)


def tree_hash(root: Path, extra: Iterable[bytes] = ()) -> str:
    """A hash of every file under ``root`` (names and contents) and of ``extra``: any change under
    ``root`` (an edit, a new file, a rename, a removal) gives another hash.

    Each file's digest is read from the last call's when the file's status is exactly what it was then
    (:class:`_Digests`): a warm start at 1,000 entries read and hashed every file again (~0.025 s).

    The call is remembered (in this thread's context) so that :func:`cached`, given the hash as its key, can
    hash the tree again once its value is built, and not keep a value read from another tree."""
    extra = tuple(extra)
    h = hashlib.sha256()
    for part in extra:
        h.update(len(part).to_bytes(8, "little") + part)
    top = os.fspath(root)
    digests = _Digests(root)
    unreadable: list[str] = []
    names = _file_names(top, unreadable=unreadable)
    for name in sorted(unreadable):  # a folder that cannot be read is a state of its own, not an absent one
        h.update(len(name).to_bytes(8, "little") + name.encode() + b"\0unreadable")
    for name in sorted(names):
        path = os.path.join(top, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):  # never followed (the loader refuses links): where it points is what changes
            with contextlib.suppress(OSError):
                h.update(len(name).to_bytes(8, "little") + name.encode() + b"\0link\0" + os.readlink(path).encode())
            continue
        digest = digests.known(name, st)
        if digest is None:
            digest = _file_digest(path)
            if digest is None:
                continue
            digests.learn(name, st, digest)
        h.update(len(name).to_bytes(8, "little") + name.encode() + digest)
    digests.keep()
    key = h.hexdigest()[:24]
    _last_tree.set((root, extra, key))
    return key


# The latest tree_hash of this thread: (root, extra, hash). contextvars, not a global: a reload on one thread
# and a Save as knowledge on another hash the same folder.
_last_tree: ContextVar[tuple[Path, tuple[bytes, ...], str] | None] = ContextVar("tracebot_last_tree", default=None)


def _file_names(top: str, rel: str = "", unreadable: list[str] | None = None) -> list[str]:
    """The names (relative to ``top``) of everything but folders, links to folders included (listed, so that
    their targets are hashed; never followed); an unreadable folder is skipped, its name added to
    ``unreadable``. The loader names both as problems, so the key must tell them from a tree without them,
    whose cached load has no such problem. Plain strings and ``scandir`` (``os.walk``'s joins and
    ``relpath`` were a third of a warm ``tree_hash``)."""
    names: list[str] = []
    try:
        with os.scandir(os.path.join(top, rel) if rel else top) as found:
            listed = list(found)
    except OSError:
        if unreadable is not None:
            unreadable.append(rel)
        return names
    for entry in listed:
        name = rel + entry.name
        try:
            folder = entry.is_dir()
        except OSError:
            folder = False
        if not folder or entry.is_symlink():  # a link to a folder: its target is hashed, it is never entered
            names.append(name)
        else:
            names += _file_names(top, name + os.sep, unreadable)
    return names


def _file_digest(path: str) -> bytes | None:
    """A regular file's sha256, or ``None`` (gone, unreadable, or not a regular file)."""
    try:  # never blocks on a FIFO, never follows a link swapped in since the walk
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return hashlib.file_digest(f, "sha256").digest()  # streamed: a stray huge file costs time, not memory


# A file changed this recently before its digest was taken is read again next time: its status could be the
# same after a second change within the file system's clock tick (git's "racily clean" files).
SETTLED_NS = 2_000_000_000
_STATUS = struct.Struct("<qqqQQ")  # size, modification and change times (ns), inode, device


class _Digests:
    """The files' digests :func:`tree_hash` took last time under ``root``, by name, with the status each
    file had (kept in the cache folder as ``digests-*.pkl``). A digest is reused only when the file's size,
    modification and change times, inode and device are all what they were, and it had not changed for
    :data:`SETTLED_NS` before it was read: any write since sets the change time (which no one but the clock
    sets), a file replaced by another is another inode or change time."""

    def __init__(self, root: Path) -> None:
        self.key = hashlib.sha256(os.fsencode(os.path.abspath(root))).hexdigest()[:24]
        self.started = time.time_ns()
        # per name, the file's status (packed: one bytes object a file unpickles in a tenth of a tuple's time)
        # and then its digest
        self.before: dict[str, bytes] = (lookup("digests", self.key) or {}) if cache_dir() else {}
        self.now: dict[str, bytes] = {}

    @staticmethod
    def _status(st: os.stat_result) -> bytes:
        return _STATUS.pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)

    def known(self, name: str, st: os.stat_result) -> bytes | None:
        kept = self.before.get(name)
        if kept is None or not stat.S_ISREG(st.st_mode) or kept[: _STATUS.size] != self._status(st):
            return None
        self.now[name] = kept
        return kept[_STATUS.size :]

    def learn(self, name: str, st: os.stat_result, digest: bytes) -> None:
        if st.st_ctime_ns < self.started - SETTLED_NS and st.st_mtime_ns < self.started - SETTLED_NS:
            self.now[name] = self._status(st) + digest

    def keep(self) -> None:
        if self.now != self.before and cache_dir():
            store("digests", self.key, self.now)


def cached_yaml(path: Path) -> Any:
    """One of tracebot's own data files (the matcher's glossary, the platforms' words), parsed by libyaml's C
    loader when there (pure-Python safe_load took ~0.1 s of every cold start and training), and cached under
    its bytes: a warm start that reads its tables this way never imports PyYAML (~0.015 s)."""
    raw = path.read_bytes()
    key = hashlib.sha256(raw + library_versions(("yaml",)).encode()).hexdigest()[:24]

    def parse() -> Any:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(raw.decode("utf-8"), Loader=loader)  # noqa: S506 (our own file, a safe loader)

    return cached("table", key, parse)


def cache_file(kind: str, key: str) -> Path | None:
    """Where :func:`cached` keeps ``kind``'s value for ``key`` (whether or not it is there yet); ``None``
    when there is no cache."""
    root = cache_dir()
    return root / f"{kind}-{key}.pkl" if root else None


def cached(kind: str, key: str, build: Callable[[], T]) -> T:
    """``build()``, or what it returned the last time for this ``kind`` and ``key``.

    Written to a temporary file and renamed into place, so a reader (another process, another
    thread) sees a whole file or none, and concurrent writers of the same key just replace each
    other's identical result. Older files of the same ``kind`` beyond the newest :data:`KEEP` are
    removed: each edit of the knowledge base leaves one behind.

    When ``key`` is the :func:`tree_hash` this thread just took, the tree is hashed again once the value is
    built, and a value built while the tree changed (an entry saved while the bot reloads) is returned but
    not kept: under the key of the tree before the edit it would be served again whenever the files return
    to that state (the edit reverted), with the edit's text in it."""
    value = lookup(kind, key)
    if value is None:
        tree = _last_tree.get()
        try:
            value = build()
            if tree is None or tree[2] != key or tree_hash(tree[0], tree[1]) == key:
                store(kind, key, value)
            else:
                log.info("%s changed while it was read: its %s is not cached", tree[0], kind)
        finally:  # a build that failed after :func:`prewrite`
            path = cache_file(kind, key)
            early = _early.pop(path, None) if path is not None else None
            if early is not None:
                early.drop()
    return value


def lookup(kind: str, key: str) -> Any:
    """What :func:`store` stored for ``kind`` and ``key``, or ``None`` (none, unreadable, or no cache)."""
    path = cache_file(kind, key)
    if path is not None and path.is_file():
        try:
            value = _load(path)
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: kept by _prune
            return value
        except Exception:  # noqa: BLE001 — a stale or torn cache file just means building again
            pass
    return None


def store(kind: str, key: str, value: object) -> None:
    """Keep ``value`` for ``kind`` and ``key`` (never raises: no cache is not an error)."""
    path = cache_file(kind, key)
    if path is not None:
        _store(path, value)
        _prune(path.parent, kind)


KEEP = 4  # cache files kept per kind

# A cache file: MAGIC, the pickle's offset and length and the number of buffers (u64 each), each buffer's
# offset and size, the buffers at 64-byte boundaries, then the pickle. Large arrays (the ranking model's
# sparse matrices, ~100 MB at 1,000 entries) are pickled out of band (protocol 5) and come back as
# read-only views of the mapped file: loading costs a page fault per page actually read, not a copy of it
# all. The buffers come before the pickle so that their places depend only on their sizes: a value's
# large arrays can be written while the rest of it is still being computed (:func:`prewrite`).
MAGIC = b"TBCACHE2"
_U64 = struct.Struct("<Q")
_ALIGN = 64
MIN_OUT_OF_BAND = 4096  # bytes; smaller arrays (a model's coefficients) are pickled in band


def _pickled(value: object) -> tuple[bytes, list[memoryview]]:
    """``value``'s pickle and its out-of-band buffers (contiguous, at least :data:`MIN_OUT_OF_BAND`)."""
    raws: list[memoryview] = []

    def take(buffer: pickle.PickleBuffer) -> bool:
        raw = buffer.raw()
        if raw.nbytes < MIN_OUT_OF_BAND:
            return True  # in band
        raws.append(raw)
        return False

    return pickle.dumps(value, protocol=5, buffer_callback=take), raws


def _layout(raws: list[memoryview]) -> tuple[list[int], int]:
    """Each buffer's offset in the file, and the pickle's."""
    at = len(MAGIC) + _U64.size * (3 + 2 * len(raws))
    offsets = []
    for raw in raws:
        at = -(-at // _ALIGN) * _ALIGN
        offsets.append(at)
        at += raw.nbytes
    return offsets, at


def _pwrite(fd: int, data: bytes | memoryview, offset: int) -> None:
    """All of ``data`` at ``offset`` (a write may take less than it is given)."""
    done = 0
    with memoryview(data).cast("B") as flat:
        while done < len(flat):
            done += os.pwrite(fd, flat[done:], offset + done)


def _write_buffers(fd: int, raws: list[memoryview], offsets: list[int]) -> None:
    for raw, offset in zip(raws, offsets, strict=True):
        _pwrite(fd, raw, offset)


def _write_rest(fd: int, data: bytes, raws: list[memoryview], offsets: list[int], at: int) -> None:
    """The pickle at ``at`` and the header (the buffers are written)."""
    table = [n for raw, offset in zip(raws, offsets, strict=True) for n in (offset, raw.nbytes)]
    header = MAGIC + b"".join(_U64.pack(n) for n in (at, len(data), len(raws), *table))
    _pwrite(fd, data, at)
    _pwrite(fd, header, 0)


def _dump(value: object, f) -> None:
    data, raws = _pickled(value)
    offsets, at = _layout(raws)
    f.flush()
    _write_buffers(f.fileno(), raws, offsets)
    _write_rest(f.fileno(), data, raws, offsets, at)


def _load(path: Path) -> object:
    if not _private_folder(path.parent):
        raise PermissionError(f"{path.parent} is not a private folder of this user: not read")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st):
            raise PermissionError(f"{path} is not this user's own file: not read")
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    if mapped[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{path} is not a tracebot cache file")
    view = memoryview(mapped)
    at = len(MAGIC)
    start, size, count = (_U64.unpack_from(mapped, at + i * _U64.size)[0] for i in range(3))
    at += 3 * _U64.size
    table = [_U64.unpack_from(mapped, at + i * _U64.size)[0] for i in range(2 * count)]
    buffers = [view[o : o + n] for o, n in zip(table[::2], table[1::2], strict=True)]
    if any(len(b) != n for b, n in zip(buffers, table[1::2], strict=True)) or len(view[start : start + size]) != size:
        raise ValueError(f"{path} is truncated")
    # our own cache file, keyed by content hash; the arrays keep the mapping alive
    return pickle.loads(view[start : start + size], buffers=buffers)  # noqa: S301


def _store(path: Path, value: object) -> None:
    tmp = None
    try:
        if not _our_folder(path.parent):
            return  # someone else's folder: nothing of ours is left where it could be replaced
        early = _early.pop(path, None)
        if early is not None:
            done = False
            try:
                done = early.finish(path, value)
            finally:  # not finished (the arrays differ, or pickling ``value`` raised): its thread, fd and file go
                if not done:
                    early.drop()
            if done:
                return
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=_tmp_prefix(), delete=False) as f:
            tmp = f.name
            _dump(value, f)
        os.replace(tmp, path)
        tmp = None
    except Exception:  # noqa: BLE001 — no cache (read-only home, full disk, unpicklable) is not an error
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _our_folder(folder: Path) -> bool:
    """Make the cache folder (private to this user) when it is missing; whether it is ours to write in."""
    try:
        make_private(folder)
    except OSError as exc:  # a service user whose home is /nonexistent, a read-only disk
        if folder not in _said_not_private:
            _said_not_private.add(folder)
            log.warning("cache folder %s cannot be made (%s): no cache, so the knowledge base is parsed and the "
                        "ranking model trained at every start (TRACEBOT_CACHE names a folder of this user's own, "
                        "or empty for none)", folder,
                        "a file is in its way" if isinstance(exc, NotADirectoryError) else exc.strerror or exc)
        return False
    return _private_folder(folder)


class _Early:
    """A cache file's large arrays being written by a thread (:func:`prewrite`) into a temporary file."""

    def __init__(self, path: Path, draft: object):
        import threading

        _, self.raws = _pickled(draft)
        self.offsets, self.at = _layout(self.raws)
        self.fd, self.tmp = tempfile.mkstemp(dir=path.parent, prefix=_tmp_prefix())
        self.failed = False
        self.thread = threading.Thread(target=self._write, daemon=True)
        try:
            self.thread.start()
        except BaseException:  # no thread (RuntimeError: none left): no temporary file and descriptor kept open
            os.close(self.fd)
            os.unlink(self.tmp)
            raise

    def _write(self) -> None:
        try:
            _write_buffers(self.fd, self.raws, self.offsets)
        except OSError:
            self.failed = True

    def finish(self, path: Path, value: object) -> bool:
        """Complete the file as ``value``'s and rename it to ``path``: whether done (not when ``value``'s
        large arrays are not exactly the draft's, the same memory, or writing failed)."""
        data, raws = _pickled(value)
        self.thread.join()
        # the same arrays (the draft's buffers keep them alive: an identity cannot be reused)
        same = len(raws) == len(self.raws) and all(a.obj is b.obj and a.nbytes == b.nbytes for a, b in zip(raws, self.raws, strict=True))
        if not same or self.failed:
            return False
        try:
            _write_rest(self.fd, data, raws, self.offsets, self.at)
            os.close(self.fd)
            self.fd = -1
            os.replace(self.tmp, path)
        except OSError:
            return False
        return True

    def drop(self) -> None:
        self.thread.join()
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


_early: dict[Path, _Early] = {}


def prewrite(kind: str, key: str, draft: object) -> None:
    """Start writing ``draft``'s large arrays into ``kind``'s cache file for ``key`` now, on a thread:
    called by a :func:`cached` build whose result will hold exactly those arrays (the same objects) once
    the rest is computed (the ranking model: ~100 MB of TF-IDF spaces at 1,000 entries, known before its
    regressions are fitted), so that writing them (~0.15 s) overlaps that work. The file is completed
    when :func:`cached` stores the result, or written whole as usual when its arrays are not the draft's."""
    path = cache_file(kind, key)
    if path is None or path in _early:
        return
    try:
        if _our_folder(path.parent):
            _early[path] = _Early(path, draft)
    except Exception:  # noqa: BLE001 — as _store: no cache is not an error
        pass


STALE_TMP_S = 3600.0  # a temporary file untouched this long is a killed writer's (a write takes seconds)


def _tmp_prefix(pid: int | None = None) -> str:
    """Temporary files carry their writer's pid, so that whoever kills a writer can remove what it left."""
    return f".tmp-{os.getpid() if pid is None else pid}-"


def drop_temporaries(folder: Path, pid: int) -> None:
    """Remove the temporary files a killed (and reaped) writer ``pid`` left in ``folder``: the training helper,
    stopped because nothing needed its model, may be mid-write of ~100 MB that :func:`_prune` would otherwise
    keep for :data:`STALE_TMP_S`."""
    for p in folder.glob(_tmp_prefix(pid) + "*"):
        with contextlib.suppress(OSError):
            p.unlink()


def _prune(folder: Path, kind: str) -> None:
    # A process killed while writing (the training helper, stopped at its timeout, may be mid-prewrite)
    # leaves its temporary file: ~100 MB for a model, never renamed, never read, and otherwise never removed.
    now = time.time()
    for p in folder.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if now - p.lstat().st_mtime > STALE_TMP_S:
                p.unlink()
    files = []
    for p in folder.glob(f"{kind}-*.pkl"):
        with contextlib.suppress(OSError):
            files.append((p.stat().st_mtime, p))
    for _, p in sorted(files, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            p.unlink()
