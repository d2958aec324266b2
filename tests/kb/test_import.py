"""``tracebot kb import DOC``: a runbook becomes one draft entry per section that shows an error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import KNOWLEDGE, REPO
from tests.support import entry_dict, require, write_kb
from tracebot.authoring.draft import DraftError
from tracebot.authoring.importer import MAX_DOC_BYTES, import_document, split_sections
from tracebot.authoring.lint import lint
from tracebot.cli import main
from tracebot.knowledge.loader import load_knowledge_base


def _seeds_dir() -> Path:
    # The seeds live in shared/ beside the clone (as in this project's CI), or where TRACEBOT_SEEDS says.
    for candidate in (os.environ.get("TRACEBOT_SEEDS"), REPO.parent / "shared" / "seeds"):
        if candidate and Path(candidate, "003_7e992738102f1530.txt").is_file():
            return Path(candidate)
    if os.environ.get("TRACEBOT_SEEDS_OPTIONAL"):  # a checkout without shared/ (GitHub pull requests)
        pytest.skip("the seed documents are not beside this checkout")
    require(False, "the five seed documents (set TRACEBOT_SEEDS to their directory)")
    raise AssertionError("unreachable")


# What the importer drafts from the seeds: (doc, section) -> draft id. Sections that only show shell
# commands, Python, prose or an nvidia-smi table draft nothing.
SEED_DRAFTS = {
    (
        "000_2f07280e1d145d25.txt",
        "Considerations for Using SageMaker Debugger with SageMaker Distributed Model Parallel",
    ): "distributed-ts-model-parallel-debugger",
    ("000_2f07280e1d145d25.txt", "Saving Checkpoints"): "distributed-ts-model-parallel-checkpoints",
    ("000_2f07280e1d145d25.txt", "NCCL error"): "distributed-ts-model-parallel-nccl-error",
    (
        "001_c3e40f8e1ba1b07f.txt",
        "Using SageMaker Distributed Data Parallel with SageMaker Debugger and Checkpoints",
    ): "distributed-ts-data-parallel-debugger",
    (
        "002_f165f0660cbac4cc.txt",
        "Training job fails due to missing PyTorcl/XLA configuration",
    ): "training-compiler-troubleshooting-missing-xla-config",
    ("003_7e992738102f1530.txt", "よくあるエラー"): "doc-003-section-6",
    ("004_1c43e8986bcf22bc.txt", "py-spy"): "py-spy",
}

RUNBOOK = """\
# Cluster runbook

Things that go wrong, and what to do.

## Disk full on the checkpoint volume<a name="disk-full"></a>

Saving a checkpoint fails with an error like the following:

```
[rank0]: OSError: [Errno 28] No space left on device: '/scratch/ckpt/step_1000/model.pt'
```

Check the volume first:

```bash
df -h /scratch
```

## Writing a custom hook

```python
def on_error(exc):
    raise RuntimeError("hook failed") from exc
```

## ノードが応答しない

以下のエラーが出た場合はノードを確認する。

```
slurm0-a3-ghpc-7: srun: error: Node failure on slurm0-a3-ghpc-7
srun: error: slurm0-a3-ghpc-7: task 8-15: Killed
```

### Queue check

```
squeue -u $USER
sacct -j 4512 --format=JobID,State,ExitCode
```

## Loader crashes

If the job dies with the `DataLoader worker (pid 4242) is killed by signal: Bus error` error message, raise /dev/shm.
"""

PLAIN_RUNBOOK = """\
Disk full
=========

When the checkpoint volume is full, training dies with:

    OSError: [Errno 28] No space left on device: '/scratch/ckpt/model.pt'

Slow start
----------

The first step is slow while kernels compile. Nothing to fix.
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_five_seed_runbooks_draft_one_entry_per_section_that_shows_an_error(tmp_path: Path):
    seeds = _seeds_dir()
    out = tmp_path / "drafts"
    drafted = {}
    for doc in sorted(seeds.glob("[0-9]*.txt")):
        report = import_document(doc, out)
        for d in report.drafts:
            assert d.path is not None, d.skipped
            drafted[(doc.name, d.section.heading)] = d.entry_id
    assert drafted == SEED_DRAFTS
    kb, problems = lint(out)
    assert len(kb.entries) == len(SEED_DRAFTS)
    assert problems and all("TODO" in p.message for p in problems), [
        p for p in problems if "TODO" not in p.message
    ]


def test_the_seed_drafts_cite_the_sections_the_hand_written_entries_cite(tmp_path: Path):
    seeds = _seeds_dir()
    hand, _ = load_knowledge_base(KNOWLEDGE)
    cited = {(s.get("doc"), s.get("section")) for e in hand.entries for s in e.sources}
    out = tmp_path / "drafts"
    for doc in sorted(seeds.glob("[0-9]*.txt")):
        import_document(doc, out)
    drafts, errors = load_knowledge_base(out)
    assert not errors
    for d in drafts.entries:
        (source,) = d.sources
        assert (source["doc"], source["section"]) in cited, (
            f"{d.id} cites a section no hand-written entry cites"
        )


def test_the_japanese_runbook_section_gets_a_positional_id_and_its_watchdog_lines_as_signatures(
    tmp_path: Path,
):
    doc = _seeds_dir() / "003_7e992738102f1530.txt"
    report = import_document(doc, tmp_path / "drafts")
    (draft,) = report.drafts
    assert draft.entry_id == "doc-003-section-6" and draft.section.heading == "よくあるエラー"
    drafts, _ = load_knowledge_base(tmp_path / "drafts")
    entry = drafts.get("doc-003-section-6")
    assert entry.sources == [{"doc": doc.name, "section": "よくあるエラー"}]
    assert any("Watchdog caught collective operation timeout" in r for r in entry.regex)
    quiet = {s.heading for s in report.sections_without_errors}
    assert {"JOBが実行されていないことを確認", "JOB番号が分かっている場合", "ゾンビプロセスの確認"} <= quiet


def test_error_blocks_become_drafts_and_commands_and_source_code_do_not(tmp_path: Path):
    doc = _write(tmp_path, "runbook.md", RUNBOOK)
    report = import_document(doc, tmp_path / "drafts")
    ids = {d.section.heading: d.entry_id for d in report.drafts}
    assert ids == {
        "Disk full on the checkpoint volume": "disk-full",
        "ノードが応答しない": "doc-runbook-section-4",
        "Loader crashes": "loader-crashes",
    }
    kb, problems = lint(tmp_path / "drafts")
    assert all("TODO" in p.message for p in problems), problems
    disk = kb.get("disk-full")
    assert disk.regex == [r"OSError: \[Errno \d+\] No space left on device: '\S+'"]
    assert disk.examples_match == [
        "[rank0]: OSError: [Errno 28] No space left on device: '/scratch/ckpt/step_1000/model.pt'"
    ]
    assert kb.get("loader-crashes").regex == [r"DataLoader worker \(pid \d+\) is killed by signal: Bus error"]
    node = kb.get("doc-runbook-section-4")
    assert node.sources == [{"doc": "runbook.md", "section": "ノードが応答しない"}]
    assert len(node.regex) == 2


def test_a_plain_text_runbook_with_underlined_headings_and_indented_errors(tmp_path: Path):
    doc = _write(tmp_path, "runbook.txt", PLAIN_RUNBOOK)
    sections = split_sections(PLAIN_RUNBOOK)
    assert [s.heading for s in sections] == ["Disk full", "Slow start"]
    report = import_document(doc, tmp_path / "drafts")
    assert [d.entry_id for d in report.written] == ["disk-full"]
    assert [s.heading for s in report.sections_without_errors] == ["Slow start"]


def test_import_never_overwrites_a_draft_and_never_reuses_an_id_the_knowledge_base_has(tmp_path: Path):
    doc = _write(tmp_path, "runbook.md", RUNBOOK)
    out = tmp_path / "drafts"
    import_document(doc, out)
    edited = out / "disk-full.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "# the author's edit\n", encoding="utf-8")
    again = import_document(doc, out)
    assert not again.written
    assert all("never overwrites" in d.skipped for d in again.drafts)
    assert edited.read_text(encoding="utf-8").endswith("# the author's edit\n")

    kb_root = write_kb(tmp_path / "knowledge", [entry_dict("disk-full")])
    third = import_document(doc, tmp_path / "elsewhere", kb_root)
    skipped = {d.entry_id: d.skipped for d in third.drafts if d.path is None}
    assert list(skipped) == ["disk-full"] and "already exists" in skipped["disk-full"]


def test_kb_import_command_reports_drafts_per_section_and_a_missing_document(tmp_path: Path, capsys):
    doc = _write(tmp_path, "runbook.md", RUNBOOK)
    out = tmp_path / "drafts"
    code = main(["kb", "import", str(doc), "--out", str(out), "--knowledge", str(tmp_path / "none")])
    text = capsys.readouterr().out
    assert code == 0
    assert "3 draft(s), 3 section(s) without an error" in text
    assert f"§ Disk full on the checkpoint volume -> disk-full: {out / 'disk-full.yaml'}" in text
    assert main(["kb", "import", str(tmp_path / "missing.md"), "--out", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_an_oversized_document_is_refused_before_it_is_read(tmp_path: Path):
    doc = tmp_path / "huge.md"
    with doc.open("wb") as fh:
        fh.truncate(MAX_DOC_BYTES + 1)
    with pytest.raises(DraftError, match="kb import reads documents up to"):
        import_document(doc, tmp_path / "drafts")
