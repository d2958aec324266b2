"""The built matcher comes from the cache only while nothing under knowledge/ changed; a corrupt cache
file is rebuilt; two processes building at once both get a working matcher; and a cached matcher gives
exactly the diagnoses a freshly built one gives, on both development corpora."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tracebot.authoring.evaluate import load_cases
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher, load_matcher

ROOT = Path(__file__).resolve().parents[2]
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


@pytest.fixture
def kb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    shutil.copytree(ROOT / "knowledge", tmp_path / "knowledge")
    return tmp_path / "knowledge"


def _matcher_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("matcher-*.pkl"))


def _best(directory: Path, text: str) -> str | None:
    _kb, m, _errors = load_matcher(directory, model=False)
    best = m.diagnose(text).best
    return best.entry_id if best else None


def test_an_unchanged_knowledge_base_is_served_from_the_cache(kb_dir: Path) -> None:
    cache = kb_dir.parent / "cache"
    _kb, first, _ = load_matcher(kb_dir, model=False)
    stored = _matcher_files(cache)
    assert len(stored) == 1
    before = stored[0].stat().st_mtime_ns
    _kb, again, _ = load_matcher(kb_dir, model=False)
    assert _matcher_files(cache) == stored and stored[0].stat().st_mtime_ns >= before
    assert again.index is not first.index  # unpickled, not rebuilt in this process by accident
    assert again.diagnose(OOM).best.entry_id == first.diagnose(OOM).best.entry_id == "cuda-oom"


def test_adding_editing_or_deleting_a_file_under_knowledge_invalidates_the_cache(kb_dir: Path) -> None:
    cache = kb_dir.parent / "cache"
    oom_file = next(kb_dir.rglob("cuda-oom.yaml"))
    assert _best(kb_dir, OOM) == "cuda-oom"
    n = len(_matcher_files(cache))

    # add: a new entry whose anchor only it has
    new = oom_file.parent / "zz-new-entry.yaml"
    text = oom_file.read_text(encoding="utf-8").replace("id: cuda-oom", "id: zz-new-entry", 1)
    new.write_text(text.replace("anchors:", "anchors:\n    - \"flux capacitor overheated\"", 1), encoding="utf-8")
    assert _best(kb_dir, "flux capacitor overheated on rank 3") == "zz-new-entry"
    assert len(_matcher_files(cache)) == n + 1

    # edit: the anchor changes, the old wording no longer matches, the new one does
    new.write_text(new.read_text(encoding="utf-8").replace("flux capacitor", "warp core"), encoding="utf-8")
    assert _best(kb_dir, "warp core overheated on rank 3") == "zz-new-entry"
    assert _best(kb_dir, "flux capacitor overheated on rank 3") != "zz-new-entry"

    # delete: the entry is gone
    new.unlink()
    assert _best(kb_dir, "warp core overheated on rank 3") != "zz-new-entry"

    # any file counts, not only entries
    (kb_dir / "NOTES.txt").write_text("not an entry\n")
    before = set(_matcher_files(cache))
    load_matcher(kb_dir, model=False)
    assert set(_matcher_files(cache)) - before


def test_a_corrupt_cache_file_is_ignored_and_rebuilt(kb_dir: Path) -> None:
    cache = kb_dir.parent / "cache"
    load_matcher(kb_dir, model=False)
    [stored] = _matcher_files(cache)
    for garbage in (b"", b"not a pickle at all", stored.read_bytes()[: 1000]):
        stored.write_bytes(garbage)
        assert _best(kb_dir, OOM) == "cuda-oom"
        assert stored.stat().st_size > 100_000  # written again, whole
    assert not list(cache.glob(".tmp-*"))


CHILD = """
import json, sys
from pathlib import Path
ready, go = Path(sys.argv[2]), Path(sys.argv[3])
ready.touch()
while not go.exists():  # both children start building together
    pass
from tracebot.matcher import load_matcher
kb, m, errors = load_matcher(Path(sys.argv[1]), model=False)
print(json.dumps([m.diagnose(sys.argv[4]).best.entry_id, len(kb.entries)]))
"""


def test_two_processes_building_the_same_cache_at_once_both_get_the_matcher(kb_dir: Path) -> None:
    cache, work = kb_dir.parent / "cache", kb_dir.parent
    env = {"TRACEBOT_CACHE": str(cache), "PATH": "/usr/bin:/bin", "TRACEBOT_MODEL": "0"}
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(kb_dir), str(work / f"ready{i}"), str(work / "go"), OOM],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(2)
    ]
    while not all((work / f"ready{i}").exists() for i in range(2)):
        assert all(c.poll() is None for c in children), [c.communicate() for c in children]
    (work / "go").touch()
    outs = [c.communicate(timeout=300) for c in children]
    assert all(c.returncode == 0 for c in children), outs
    results = [json.loads(out) for out, _err in outs]
    assert results[0] == results[1] and results[0][0] == "cuda-oom"
    assert len(_matcher_files(cache)) == 1 and not list(cache.glob(".tmp-*"))
    assert _best(kb_dir, OOM) == "cuda-oom"  # and the file they left loads


@pytest.mark.parametrize("model", [False, True], ids=["rules", "model"])
def test_a_cached_matcher_diagnoses_the_corpora_exactly_as_a_fresh_one(kb_dir: Path, model: bool) -> None:
    kb, _ = load_knowledge_base(kb_dir)
    fresh = Matcher(kb, model=model)
    load_matcher(kb_dir, model=model)  # fills the cache
    _kb, cached, _ = load_matcher(kb_dir, model=model)
    assert (cached.model is None) == (not model)
    checked = 0
    for name in ("corpus", "holdout"):
        for case in load_cases(ROOT / "tests" / name / "cases.jsonl"):
            if case.file:
                a, b = fresh.diagnose_file(case.file), cached.diagnose_file(case.file)
            else:
                a, b = fresh.diagnose(case.text), cached.diagnose(case.text)
            assert a.to_dict() == b.to_dict(), case.id
            checked += 1
    assert checked > 400
    assert [m.entry_id for m in fresh.search("nccl timeout")] == [m.entry_id for m in cached.search("nccl timeout")]
