"""The knowledge directory's hash (the matcher's cache key) reuses a file's digest only while the file is
exactly as it was: a warm start reads no file, an edit is always seen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracebot.knowledge import cache
from tracebot.knowledge.cache import tree_hash


@pytest.fixture
def counted_reads(monkeypatch, tmp_path: Path) -> list[str]:
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "SETTLED_NS", 0)  # files written by the test count as settled at once
    reads: list[str] = []
    real = cache._file_digest

    def digest(path: str) -> bytes | None:
        reads.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(cache, "_file_digest", digest)
    return reads


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "knowledge"
    (root / "cuda").mkdir(parents=True)
    (root / "cuda" / "a.yaml").write_text("id: a\n", encoding="utf-8")
    (root / "cuda" / "b.yaml").write_text("id: b\n", encoding="utf-8")
    return root


def test_a_second_hash_of_an_unchanged_tree_reads_no_file_and_is_the_same(counted_reads, tmp_path: Path):
    root = _tree(tmp_path)
    first = tree_hash(root)
    assert sorted(counted_reads) == ["a.yaml", "b.yaml"]
    counted_reads.clear()
    assert tree_hash(root) == first
    assert counted_reads == []


def test_an_edit_that_keeps_the_size_and_the_modification_time_is_seen(counted_reads, tmp_path: Path):
    root = _tree(tmp_path)
    first = tree_hash(root)
    path = root / "cuda" / "a.yaml"
    before = path.stat()
    path.write_text("id: z\n", encoding="utf-8")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the change time still moves
    counted_reads.clear()
    second = tree_hash(root)
    assert counted_reads == ["a.yaml"]
    assert second != first
    path.write_text("id: a\n", encoding="utf-8")
    assert tree_hash(root) == first


def test_a_file_changed_just_before_it_was_hashed_is_read_again_next_time(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    reads: list[str] = []
    real = cache._file_digest
    monkeypatch.setattr(cache, "_file_digest", lambda path: reads.append(path) or real(path))
    root = _tree(tmp_path)  # written now: within SETTLED_NS, a second edit could keep the same status
    tree_hash(root)
    tree_hash(root)
    assert len(reads) == 4


def test_a_file_replaced_by_a_link_to_the_same_bytes_changes_the_hash(counted_reads, tmp_path: Path):
    root = _tree(tmp_path)
    first = tree_hash(root)
    target = tmp_path / "elsewhere.yaml"
    target.write_text("id: a\n", encoding="utf-8")
    (root / "cuda" / "a.yaml").unlink()
    (root / "cuda" / "a.yaml").symlink_to(target)
    assert tree_hash(root) != first


def test_a_folder_that_cannot_be_read_gives_another_key_than_no_such_folder(counted_reads, tmp_path: Path, monkeypatch):
    # The same key would hand back the load cached before the folder existed, which names no problem: its
    # entries would vanish from the answers in silence.
    from tests.kb.test_loader import _unreadable

    root = _tree(tmp_path)
    (root / "nccl").mkdir()
    (root / "nccl" / "c.yaml").write_text("id: c\n", encoding="utf-8")
    with monkeypatch.context() as m:
        _unreadable(m, root / "nccl")
        unreadable = tree_hash(root)
    (root / "nccl" / "c.yaml").unlink()
    (root / "nccl").rmdir()
    assert tree_hash(root) != unreadable
