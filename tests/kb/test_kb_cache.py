"""The parsed knowledge base comes from the cache only while nothing under knowledge/ changed, and
libyaml's fast path reads the same entries, with the same line numbers, as the careful loader."""

from __future__ import annotations

import re
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
        assert list(fast[0].items()) == list(_key_lines(node).items())


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


def test_an_edit_parses_only_the_edited_file_and_loads_what_a_fresh_parse_loads(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "MIN_CACHED_FILES", 0)
    kb_dir = tmp_path / "knowledge"
    shutil.copytree(ROOT / "knowledge", kb_dir)
    load_knowledge_base(kb_dir)
    victim = sorted(p for p in kb_dir.rglob("*.yaml") if p.name != loader.SOURCES_FILE)[0]
    victim.write_text(victim.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: Edited ", 1), encoding="utf-8")
    sources = kb_dir / loader.SOURCES_FILE
    cited = next(e for e in load_knowledge_base(kb_dir)[0].entries for s in e.sources if "doc" in s)
    doc = next(s["doc"] for s in cited.sources if "doc" in s)
    # a document's new title reaches the entries citing it, though their files are unchanged
    text = re.sub(rf"^({re.escape(doc)}:\n  title: ).*$", r'\1"Renamed"', sources.read_text(encoding="utf-8"), flags=re.M)
    sources.write_text(text, encoding="utf-8")
    parsed: list[str] = []
    real = loader.parse_entry_text
    monkeypatch.setattr(loader, "parse_entry_text", lambda raw, shown, path=None: parsed.append(shown) or real(raw, shown, path))
    victim.write_text(victim.read_text(encoding="utf-8").replace("\ntitle: Edited ", "\ntitle: Edited again ", 1), encoding="utf-8")
    got, errors = load_knowledge_base(kb_dir)
    assert parsed == [str(victim.relative_to(tmp_path))]
    fresh, fresh_errors = loader._load(kb_dir)
    assert got.entries == fresh.entries and errors == fresh_errors
    assert got.get(victim.stem).title.startswith("Edited again ")
    assert {"doc": doc, "title": "Renamed"}.items() <= next(s for s in got.get(cited.id).sources if s.get("doc") == doc).items()


def test_entries_served_from_the_parse_cache_have_this_loads_paths(tmp_path, monkeypatch) -> None:
    # loaded once by a relative path and once by an absolute one (TRACEBOT_KNOWLEDGE may be either): a broken
    # link is reported against this load's files, not the first load's (which crashed kb lint)
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "MIN_CACHED_FILES", 0)
    kb_dir = tmp_path / "kbcopy"
    shutil.copytree(ROOT / "knowledge", kb_dir)
    monkeypatch.chdir(tmp_path)
    load_knowledge_base(Path("kbcopy"))
    linked = next(e for e in load_knowledge_base(kb_dir)[0].entries if e.related)
    target = next(p for p in kb_dir.rglob("*.yaml") if p.stem == linked.related[0])
    target.unlink()
    monkeypatch.chdir("/")
    kb, errors = load_knowledge_base(kb_dir)
    assert all(e.path is not None and e.path.is_absolute() and e.path.is_file() for e in kb.entries)
    assert any(linked.related[0] in err.message for err in errors)


def test_each_entry_is_given_as_soon_as_its_file_is_parsed_as_the_knowledge_base_holds_it(tmp_path, monkeypatch) -> None:
    # the training helper is handed each entry while the rest are parsed: every entry of the result, in its
    # order, with its documents' titles (the same objects), the first long before the last file is parsed;
    # the parse's cache still keeps the entries as parsed (a document's title is filled in on each load)
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    events: list[tuple[str, object]] = []
    real = loader.parse_entry_text
    monkeypatch.setattr(loader, "parse_entry_text", lambda raw, shown, path=None: events.append(("parsed", shown)) or real(raw, shown, path))
    kb, _ = load_knowledge_base(ROOT / "knowledge", whole=False, each=lambda e: events.append(("given", e)))
    given = [e for what, e in events if what == "given"]
    assert len(given) == len(kb.entries) and all(a is b for a, b in zip(given, kb.entries, strict=True))
    assert [what for what, _ in events[:3]] == ["parsed", "given", "parsed"]
    cited = next(e for e in given if any("doc" in s and "title" in s for s in e.sources))
    [files] = (tmp_path / "cache").glob("files-*.pkl")
    kept = next(parsed[0] for _, parsed in loader.lookup("files", files.stem.partition("-")[2]).values() if parsed[0] and parsed[0].id == cited.id)
    assert not any("title" in s for s in kept.sources if "doc" in s) and kept.title == cited.title


@pytest.mark.parametrize("via", ["kb", "matcher"])
def test_an_entry_saved_while_the_knowledge_base_loads_is_not_cached_under_the_key_of_the_files_before_it(
    tmp_path, monkeypatch, via: str
) -> None:
    # The key is the folder's hash taken before the files are read; a file saved in between was read in its
    # new form and kept under the old form's key, so reverting the edit (git checkout) brought the edit back
    # from the cache, in the bot (the matcher's cache) as in `kb lint` (the knowledge base's).
    from tracebot.matcher.loading import load_compiled

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    kb_dir = tmp_path / "knowledge"
    shutil.copytree(ROOT / "knowledge", kb_dir)
    oom = kb_dir / "cuda" / "cuda-oom.yaml"
    before = oom.read_text(encoding="utf-8")
    edited = re.sub(r"(?m)^title: .*$", 'title: "Edited while loading"', before, count=1)
    real = loader.load_documents

    def edit_then_read(root: Path):  # called by the load after its key was taken, before any entry is read
        if oom.read_text(encoding="utf-8") == before:
            oom.write_text(edited, encoding="utf-8")
        return real(root)

    def load() -> str:
        kb = load_knowledge_base(kb_dir)[0] if via == "kb" else load_compiled(kb_dir)[0]
        return kb.get("cuda-oom").title

    monkeypatch.setattr(loader, "load_documents", edit_then_read)
    assert load() == "Edited while loading"  # what was read, as it was read
    monkeypatch.setattr(loader, "load_documents", real)
    oom.write_text(before, encoding="utf-8")  # the edit reverted: the files are as they were when the key was taken
    assert load() != "Edited while loading"
