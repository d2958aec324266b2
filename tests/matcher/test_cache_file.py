"""The cache file format: large arrays come back as read-only views of the mapped file, equal to what was
stored; a truncated or foreign file is rebuilt, never trusted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tracebot.knowledge import cache


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    return tmp_path


def value() -> dict:
    rng = np.random.default_rng(7)
    return {"big": rng.random(200_000), "ids": np.arange(1000, dtype=np.int64)[::3], "name": "x" * 100}


def test_arrays_come_back_equal_and_mapped_read_only(cache_dir: Path) -> None:
    stored = cache.cached("t", "k1", value)
    loaded = cache.cached("t", "k1", lambda: pytest.fail("built again although cached"))
    assert loaded["name"] == stored["name"]
    np.testing.assert_array_equal(loaded["big"], stored["big"])
    np.testing.assert_array_equal(loaded["ids"], stored["ids"])  # a strided view: pickled in band
    assert not loaded["big"].flags.writeable, "a view of the mapped file, not a private copy"


@pytest.mark.parametrize("damage", ["truncate", "foreign"])
def test_a_damaged_cache_file_is_rebuilt(cache_dir: Path, damage: str) -> None:
    cache.cached("t", "k2", value)
    path = cache_dir / "t-k2.pkl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"not a cache file at all")
    built = []
    again = cache.cached("t", "k2", lambda: built.append(1) or value())
    assert built == [1]
    np.testing.assert_array_equal(again["big"], value()["big"])


class _Planted:
    """Unpickling this runs code: what a planted cache file would do."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path(self.marker).write_text, ("planted cache file ran",))


def _plant(path: Path, marker: Path) -> None:
    with path.open("wb") as f:
        cache._dump(_Planted(str(marker)), f)


def test_a_cache_file_another_user_owns_is_never_unpickled(cache_dir: Path, tmp_path_factory) -> None:
    marker = tmp_path_factory.mktemp("m") / "ran"
    path = cache_dir / "t-k3.pkl"
    _plant(path, marker)
    import os
    os.chown(path, 65534, 65534)  # nobody's file (the tests run as root: a file of another user)
    again = cache.cached("t", "k3", value)
    assert not marker.exists() and again["name"] == value()["name"]


def test_a_cache_file_others_may_write_or_a_symlink_is_never_unpickled(cache_dir: Path, tmp_path_factory) -> None:
    marker = tmp_path_factory.mktemp("m") / "ran"
    writable = cache_dir / "t-k4.pkl"
    _plant(writable, marker)
    writable.chmod(0o666)
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "planted.pkl"
    _plant(elsewhere, marker)
    (cache_dir / "t-k5.pkl").symlink_to(elsewhere)
    assert cache.lookup("t", "k4") is None and cache.lookup("t", "k5") is None
    assert not marker.exists()


def test_a_cache_folder_others_may_write_is_neither_read_nor_written(cache_dir: Path) -> None:
    cache_dir.chmod(0o777)  # e.g. TRACEBOT_CACHE=/tmp/shared
    cache.cached("t", "k6", value)
    assert not list(cache_dir.glob("t-*.pkl"))
    cache_dir.chmod(0o700)
    cache.cached("t", "k6", value)
    assert cache.lookup("t", "k6") is not None


def test_a_relative_cache_folder_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a helper process started in "/" must find the folder its parent meant
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACEBOT_CACHE", "rel")
    assert cache.cache_dir() == tmp_path / "rel"


def test_a_prewritten_file_is_the_file_written_whole(cache_dir: Path) -> None:
    """A build that hands its large arrays over early (``prewrite``) leaves byte for byte the file a build
    that does not leaves; a result whose arrays are not the draft's is still stored right."""
    draft = value()

    def finished() -> dict:
        cache.prewrite("t", "early", draft)
        return {**draft, "name": "finished", "small": np.arange(4.0)}  # the same large arrays, more besides

    def other() -> dict:
        cache.prewrite("t", "other", draft)
        return {**draft, "big": draft["big"] * 2}  # not the draft's array

    cache.cached("t", "early", finished)
    cache.cached("t", "whole", lambda: {**draft, "name": "finished", "small": np.arange(4.0)})
    assert (cache_dir / "t-early.pkl").read_bytes() == (cache_dir / "t-whole.pkl").read_bytes()
    cache.cached("t", "other", other)
    again = cache.cached("t", "other", lambda: pytest.fail("built again although cached"))
    np.testing.assert_array_equal(again["big"], draft["big"] * 2)


def test_a_failed_build_leaves_no_prewritten_file(cache_dir: Path) -> None:
    def fails() -> dict:
        cache.prewrite("t", "k3", value())
        raise RuntimeError("training failed")

    with pytest.raises(RuntimeError):
        cache.cached("t", "k3", fails)
    assert sorted(p.name for p in cache_dir.iterdir()) == []


def test_a_prewritten_file_whose_result_cannot_be_pickled_is_removed(cache_dir: Path) -> None:
    """Storing fails quietly when the result cannot be pickled; the prewritten file (its large arrays,
    ~100 MB for a model) goes too, and its descriptor is closed."""
    import os

    draft = value()
    fds = len(os.listdir("/proc/self/fd"))

    def unpicklable() -> dict:
        cache.prewrite("t", "k4", draft)
        return {**draft, "fn": lambda: None}  # the draft's arrays, and something pickle refuses

    cache.cached("t", "k4", unpicklable)
    assert sorted(p.name for p in cache_dir.iterdir()) == []
    assert len(os.listdir("/proc/self/fd")) == fds


def test_a_killed_writers_temporary_file_is_removed_once_stale(cache_dir: Path) -> None:
    """A process killed mid-write (the training helper at its timeout, mid-prewrite) leaves a temporary file
    no one renames; the next store removes it once no writer could still be at it, never one in use."""
    import os
    import time

    stale, fresh = cache_dir / ".tmp-killed", cache_dir / ".tmp-writing"
    stale.write_bytes(b"\0" * 4096)
    fresh.write_bytes(b"\0" * 4096)
    old = time.time() - cache.STALE_TMP_S - 60
    os.utime(stale, (old, old))
    cache.cached("t", "k5", value)
    assert not stale.exists() and fresh.exists()


def test_a_prewrite_that_cannot_start_its_thread_leaves_nothing(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import threading

    def no_thread(self) -> None:
        raise RuntimeError("can't start new thread")

    fds = len(os.listdir("/proc/self/fd"))
    draft = value()
    with monkeypatch.context() as m:
        m.setattr(threading.Thread, "start", no_thread)
        cache.prewrite("t", "k6", draft)  # quietly nothing: the value is written whole when stored
    assert sorted(p.name for p in cache_dir.iterdir()) == []
    assert len(os.listdir("/proc/self/fd")) == fds
    stored = cache.cached("t", "k6", lambda: draft)
    np.testing.assert_array_equal(cache.lookup("t", "k6")["big"], stored["big"])
