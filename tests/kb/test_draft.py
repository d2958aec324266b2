"""``tracebot kb new ID --from FILE``: a pasted error becomes a draft entry that answers it.

The round trip runs on every real snippet of the labelled corpus: the draft, loaded as the only entry,
must answer its own snippet first and confidently, by a regex it drafted.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tests.conftest import KNOWLEDGE, REPO
from tracebot.authoring.draft import DraftError, draft_from_snippet, pick_signatures, scaffold, write_draft
from tracebot.authoring.evaluate import load_cases
from tracebot.authoring.lint import lint
from tracebot.cli import main
from tracebot.knowledge.entry import MAX_EXAMPLE_CHARS
from tracebot.knowledge.loader import KnowledgeBase, parse_entry_file, parse_entry_text
from tracebot.matcher import Matcher
from tracebot.matcher.signals import error_signature

CASES_FILE = REPO / "tests" / "corpus" / "cases.jsonl"
SNIPPET_KINDS = ("log", "traceback", "line", "ja")
_CASES = (
    [c for c in load_cases(CASES_FILE) if c.expected and c.kind in SNIPPET_KINDS]
    if CASES_FILE.exists()
    else []
)

OOM_RANK3 = """\
slurm0-a3-ghpc-8: [rank3]: Traceback (most recent call last):
slurm0-a3-ghpc-8: [rank3]:   File "/workspace/megatron/training.py", line 1187, in train_step
slurm0-a3-ghpc-8: [rank3]:     losses_reduced = forward_backward_func(
slurm0-a3-ghpc-8: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 3 has a total capacity of 79.11 GiB of which 1.83 GiB is free.
"""


def _draft(entry_id: str, snippet: str):
    """Draft ``entry_id`` from ``snippet`` and load it the way the knowledge base would."""
    text = draft_from_snippet(entry_id, snippet)
    entry, errors = parse_entry_text(text, f"{entry_id}.yaml", Path(f"{entry_id}.yaml"))
    assert not errors, errors
    assert entry is not None
    return entry


def test_the_corpus_has_real_snippets_to_draft_from():
    assert len(_CASES) >= 50, f"expected the labelled corpus at {CASES_FILE}"


@pytest.mark.parametrize("case", _CASES, ids=[c.id for c in _CASES])
def test_a_draft_from_a_real_snippet_answers_that_snippet_first(case):
    text = case.text if case.text is not None else case.file.read_text(encoding="utf-8")
    entry = _draft("draft-x", text)
    matcher = Matcher(KnowledgeBase([entry]))
    d = matcher.diagnose_file(case.file) if case.file else matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == "draft-x" and d.best.confident, d.matches
    assert d.best.kind == "regex" and d.best.signature in entry.regex
    # the snippet (or, for a long log, the window around its error lines) is the first example
    assert entry.examples_match[0].strip() in text.strip()
    assert matcher.diagnose(entry.examples_match[0]).best.entry_id == "draft-x"


def test_the_draft_still_answers_when_host_rank_sizes_and_paths_change():
    entry = _draft("oom-draft", OOM_RANK3)
    other = (
        "node017: [rank61]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
        "GPU 5 has a total capacity of 39.39 GiB of which 2.06 MiB is free."
    )
    best = Matcher(KnowledgeBase([entry])).diagnose(other).best
    assert best is not None and best.entry_id == "oom-draft" and best.confident
    assert best.ranks == ["61"]


def test_signatures_come_from_error_lines_not_traceback_frames_or_info_chatter():
    snippet = """\
algo-1:105:105 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)
algo-1:105:105 [0] NCCL INFO Using network AWS Libfabric
Traceback (most recent call last):
  File "/opt/ml/code/train.py", line 88, in <module>
    dist.all_reduce(t)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1536, in all_reduce
    work = default_pg.allreduce([tensor], opts)
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage, NCCL version 2.18.1
ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
"""
    sigs = pick_signatures(snippet)
    assert [s.line_no for s in sigs] == [8, 9]
    assert sigs[0].regex.startswith(
        r"torch\.distributed\.DistBackendError: NCCL error in: \S*/NCCLUtils\.hpp:\d+"
    )
    assert not any("INFO" in s.regex or "File" in s.regex for s in sigs)


def test_pytorchs_nccl_error_line_is_a_signature_though_it_says_nccl_debug_info():
    # "(run with NCCL_DEBUG=INFO for details)" names a setting, not a log level: the line read as INFO
    # chatter, scored nothing, and the draft (and the unanswered errors' signature) took NCCL's hint below it.
    snippet = """\
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5
[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
"""
    sigs = pick_signatures(snippet)
    assert sigs[0].line_no == 1 and sigs[0].regex.startswith(r"torch\.distributed\.DistBackendError: NCCL error in")
    signature = error_signature(snippet.splitlines()[0])
    assert signature is not None and signature.startswith("torch.distributed.distbackenderror: nccl error in")
    # a level is still a level: NCCL's own INFO lines and a DEBUG-level logger line are chatter
    assert error_signature("algo-1:105:105 [0] NCCL INFO NET/OFI failed to open the provider: error") is None
    assert error_signature("2024-05-01 12:00:00 DEBUG worker: retry failed with error 3") is None


def test_an_exception_whose_name_says_no_error_is_the_signature_not_the_code_line_above_it():
    # A library's own exception class ("FluxBufferUnderrun") scores as no error line; the draft fell back
    # to the first line that was not noise, the frame's source ``trainer.step(batch)``, and its regex
    # would have answered any traceback through that call.
    snippet = """\
[rank3]: Traceback (most recent call last):
[rank3]:   File "/workspace/train.py", line 88, in <module>
[rank3]:     trainer.step(batch)
[rank3]:              ^^^^^^^^^
[rank3]: fluxlib.errors.FluxBufferUnderrun: flux buffer underrun on cuda:3 while staging shard 17
"""
    sigs = pick_signatures(snippet)
    assert [s.line_no for s in sigs] == [5]
    assert sigs[0].regex.startswith(r"fluxlib\.errors\.FluxBufferUnderrun: flux buffer underrun")
    unprefixed = snippet.replace("[rank3]: ", "").replace("[rank3]:", "")
    assert [s.line_no for s in pick_signatures(unprefixed)] == [5]


def test_glog_prefixes_are_left_out_so_another_release_line_number_still_matches():
    old = "[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=9437184, NumelOut=9437184, Timeout(ms)=600000) ran for 600070 milliseconds before timing out."
    new = "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=BROADCAST, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
    entry = _draft("wd", old)
    assert not entry.regex[0].startswith(r"\[E")
    best = Matcher(KnowledgeBase([entry])).diagnose(new).best
    assert best is not None and best.entry_id == "wd" and best.confident


def test_a_written_draft_lints_clean_except_its_todos_which_lint_names_by_line(tmp_path: Path):
    root = tmp_path / "knowledge"
    path = write_draft(root, "oom-draft", draft_from_snippet("oom-draft", OOM_RANK3), area="cuda")
    assert path == root / "cuda" / "oom-draft.yaml"
    _, problems = lint(root)
    assert problems, "a draft with TODOs must not pass lint"
    lines = path.read_text(encoding="utf-8").splitlines()
    for p in problems:
        assert p.path == str(path) and "TODO" in p.message
        assert "TODO" in lines[p.line - 1], f"{p} does not point at a TODO line"
    named = {re.search(r"'(\w+)'|(fix step|source)", p.message).group(0) for p in problems}
    assert {"'cause'", "fix step", "source"} <= named
    # down the file, as `kb new` listed them ('cause' on line 11 came before 'title' on line 2)
    assert [p.line for p in problems] == sorted(p.line for p in problems)


def test_kb_new_without_from_scaffolds_every_field_and_never_overwrites(tmp_path: Path, capsys):
    root = tmp_path / "knowledge"
    assert main(["kb", "new", "my-entry", "--knowledge", str(root)]) == 0
    path = root / "my-entry.yaml"
    entry, errors = parse_entry_file(path)
    assert entry is not None and not errors
    assert entry.cause.startswith("TODO") and entry.anchors[0].startswith("TODO")
    assert "still to do" in capsys.readouterr().out
    path.write_text(path.read_text(encoding="utf-8") + "# edited by the author\n", encoding="utf-8")
    assert main(["kb", "new", "my-entry", "--knowledge", str(root)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8").endswith("# edited by the author\n")
    assert scaffold("my-entry").count("TODO") >= 6


def test_kb_new_reads_a_pasted_snippet_from_stdin(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(OOM_RANK3))
    root = tmp_path / "knowledge"
    assert main(["kb", "new", "pasted-oom", "--from", "-", "--knowledge", str(root)]) == 0
    out = capsys.readouterr().out
    assert "signature from line 4: torch\\.OutOfMemoryError" in out
    assert "the draft answers its snippet first" in out
    entry, _ = parse_entry_file(root / "pasted-oom.yaml")
    assert entry is not None and entry.examples_match[0].strip() == OOM_RANK3.strip()


def test_kb_new_says_when_an_existing_entry_already_answers_the_snippet(tmp_path: Path, capsys):
    import shutil

    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, root)
    snippet = tmp_path / "oom.txt"
    snippet.write_text(OOM_RANK3, encoding="utf-8")
    assert main(["kb", "new", "my-oom", "--from", str(snippet), "--knowledge", str(root)]) == 0
    assert "note: cuda-oom answers this snippet first" in capsys.readouterr().out


@pytest.mark.parametrize(
    "entry_id,snippet,message",
    [
        ("Bad_ID", OOM_RANK3, "must be lower-case letters"),
        ("../escape", OOM_RANK3, "must be lower-case letters"),
        ("ok-id", " \n\t\n", "is empty"),
    ],
)
def test_kb_new_refuses_a_bad_id_or_an_empty_paste(tmp_path: Path, capsys, entry_id, snippet, message):
    src = tmp_path / "paste.txt"
    src.write_text(snippet, encoding="utf-8")
    assert main(["kb", "new", entry_id, "--from", str(src), "--knowledge", str(tmp_path / "k")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "k").exists() or not any((tmp_path / "k").rglob("*.yaml"))


def test_a_long_log_keeps_a_bounded_window_around_its_error_lines():
    log = REPO / "tests" / "corpus" / "logs" / "oom_rank3_slurm_host_rank.log"
    text = log.read_text(encoding="utf-8")
    entry = _draft("long-oom", text)
    example = entry.examples_match[0]
    assert len(example) <= MAX_EXAMPLE_CHARS // 4 and len(example) < len(text)
    assert "torch.OutOfMemoryError: CUDA out of memory" in example
    best = Matcher(KnowledgeBase([entry])).diagnose_file(log).best
    assert best is not None and best.entry_id == "long-oom" and best.confident


def test_ansi_colours_and_control_characters_in_a_paste_survive_the_yaml_round_trip():
    snippet = (
        "\x1b[31m[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\x1b[0m\x7f\n"
    )
    entry = _draft("colour", snippet)
    assert entry.examples_match[0] == snippet.strip("\n")
    assert entry.regex == [r"RuntimeError: CUDA error: an illegal memory access was encountered"]


def test_a_japanese_error_line_becomes_a_literal_signature():
    snippet = (
        "2024-04-28 22:15:57 slurm0-a3-ghpc-6: エラー: ジョブ 4512 のノード slurm0-a3-ghpc-7 が応答しません\n"
    )
    entry = _draft("ja-node", snippet)
    assert entry.regex == [r"エラー: ジョブ \d+ のノード slurm\d+-a\d+-ghpc-\d+ が応答しません"]
    best = (
        Matcher(KnowledgeBase([entry]))
        .diagnose("エラー: ジョブ 99 のノード slurm1-a3-ghpc-12 が応答しません")
        .best
    )
    assert best is not None and best.entry_id == "ja-node"


def test_write_draft_refuses_an_id_that_an_entry_already_has(tmp_path: Path):
    root = tmp_path / "knowledge"
    write_draft(root, "one", draft_from_snippet("one", OOM_RANK3), area="cuda")
    with pytest.raises(DraftError, match="already exists"):
        write_draft(root, "one", draft_from_snippet("one", OOM_RANK3), area="nccl")


def test_kb_new_names_the_draft_and_its_todos_as_contributing_shows_them_from_the_checkout(
    tmp_path: Path, capsys, monkeypatch
):
    # CONTRIBUTING.md's walk-through: "wrote knowledge/pytorch/tensor-device-mismatch.yaml" and
    # "knowledge/pytorch/…:2: 'title' still has a TODO", run from the repository root; the default
    # knowledge folder is absolute, and every path came out from the file system's root
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACEBOT_KNOWLEDGE", str(tmp_path / "knowledge"))
    (tmp_path / "device-mismatch.log").write_text(
        "[rank2]: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:2 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)\n"
    )
    assert main(["kb", "new", "tensor-device-mismatch", "--from", "device-mismatch.log", "--area", "pytorch"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote knowledge/pytorch/tensor-device-mismatch.yaml\n")
    assert "  knowledge/pytorch/tensor-device-mismatch.yaml:2: 'title' still has a TODO" in out
    assert str(tmp_path) not in out
