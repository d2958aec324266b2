"""The parsed knowledge base comes from the cache only while nothing under knowledge/ changed, and
libyaml's fast path reads the same entries, with the same line numbers, as the careful loader."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tracebot.knowledge import loader
from tracebot.knowledge.loader import _careful_parse, _fast_parse, _key_lines, load_knowledge_base

ROOT = Path(__file__).resolve().parents[2]


def test_libyaml_reads_every_bundled_entry_like_the_careful_loader_with_the_same_lines() -> None:
    for path in sorted((ROOT / "knowledge").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        fast = _fast_parse(text)
        node, data, problem = _careful_parse(text, path.name)
        assert fast is not None and problem is None
        assert fast[1] == data
        assert _key_lines(fast[0]) == _key_lines(node)


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "id: x\nid: y\n", "a: !!python/object:os.system x\n", "a: [\n"])
def test_anchors_aliases_tags_repeated_keys_and_errors_go_to_the_careful_loader(text: str) -> None:
    assert _fast_parse(text) is None


def test_the_cache_serves_an_unchanged_directory_and_any_change_under_it_invalidates(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "MIN_CACHED_FILES", 0)
    kb_dir = tmp_path / "knowledge"
    shutil.copytree(ROOT / "knowledge", kb_dir)
    first, errors = load_knowledge_base(kb_dir)
    assert not errors and len(list((tmp_path / "cache").glob("kb-*.pkl"))) == 1
    again, _ = load_knowledge_base(kb_dir)
    assert [e.id for e in again.entries] == [e.id for e in first.entries]
    assert again.entries[0].lines == first.entries[0].lines
    victim = sorted(kb_dir.rglob("*.yaml"))[0]
    victim.write_text(victim.read_text(encoding="utf-8") + "\nid: again\n", encoding="utf-8")
    changed, errors = load_knowledge_base(kb_dir)
    assert any("duplicate key 'id'" in e.message for e in errors)  # read again, error and line kept
    assert len(changed.entries) == len(first.entries) - 1
    (kb_dir / "notes.txt").write_text("any file counts\n")
    load_knowledge_base(kb_dir)
    assert len(list((tmp_path / "cache").glob("kb-*.pkl"))) == 3
