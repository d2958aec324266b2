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
