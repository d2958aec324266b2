"""``tracebot kb eval --compare BASE_REF``: what a pull request does to the corpus, on a real git repo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import entry_dict, require, write_kb
from tracebot.cli import main

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Entry Author",
    "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "Entry Author",
    "GIT_COMMITTER_EMAIL": "author@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}

CASES = [
    {
        "id": "quota",
        "text": "OSError: [Errno 122] Disk quota exceeded on scratch volume",
        "expected": "disk-quota",
    },
    {
        "id": "rdzv",
        "text": "RendezvousClosedError: rendezvous closed for job 4512",
        "expected": "rdzv-closed",
    },
    {"id": "offbus", "text": "NVRM: Xid 79, GPU has fallen off the bus", "expected": "gpu-off-bus"},
    {"id": "healthy", "text": "epoch 3 step 1200 loss 1.234 step time 0.41s", "expected": None},
]


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, timeout=30, env={**os.environ, **GIT_ENV}
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _entry(entry_id: str, anchors: list[str], example: str, **over) -> dict:
    return entry_dict(entry_id, recognise={"anchors": anchors}, examples={"match": [example]}, **over)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    require(shutil.which("git") is not None, "git")
    root = tmp_path / "repo"
    write_kb(
        root / "knowledge",
        [
            _entry("disk-quota", ["Disk quota exceeded"], CASES[0]["text"]),
            _entry("rdzv-closed", ["rendezvous closed for job"], CASES[1]["text"]),
        ],
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base knowledge")
    return root


def _compare(repo: Path, capsys, ref: str = "main", *extra: str) -> tuple[int, str, str]:
    code = main(
        [
            "kb",
            "eval",
            str(repo / "cases.jsonl"),
            "--compare",
            ref,
            "--knowledge",
            str(repo / "knowledge"),
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, out, err


def test_a_change_that_helps_shows_the_case_it_fixes_and_passes(repo: Path, capsys):
    write_kb(repo / "knowledge", [_entry("gpu-off-bus", ["fallen off the bus"], CASES[2]["text"])])
    code, out, _ = _compare(repo, capsys)
    assert code == 0, out
    assert "top-1" in out and "66.7%" in out and "100.0%" in out
    assert "offbus (expects gpu-off-bus): (nothing) -> gpu-off-bus   [now right]" in out
    assert "OK: this change does not make the corpus worse." in out


def test_a_change_that_hurts_says_so_plainly_names_the_stolen_example_and_fails(repo: Path, capsys):
    # A broad, high-priority entry: it takes over the rendezvous case and answers a healthy log.
    greedy = _entry(
        "disk-quota",
        ["Disk quota exceeded", "rendezvous closed", "step time"],
        CASES[0]["text"],
        priority=95,
    )
    write_kb(repo / "knowledge", [greedy])
    code, out, _ = _compare(repo, capsys)
    assert code == 1, out
    assert "rdzv (expects rdzv-closed): rdzv-closed -> disk-quota   [now wrong]" in out
    assert "healthy (expects no answer): (nothing) -> disk-quota   [new false positive]" in out
    stolen = repo / "knowledge" / "rdzv-closed.yaml"
    assert f"{stolen}:" in out and "rdzv-closed examples.match[0] now goes to disk-quota" in out
    worse = next(line for line in out.splitlines() if line.startswith("WORSE"))
    assert "top-1 fell from 66.7% to 33.3%" in worse
    assert "false positives rose from 0.0% to 100.0%" in worse
    assert "1 entry example now answered by another entry" in worse


def test_compare_as_json_lists_before_after_changes_and_why_it_is_worse(repo: Path, capsys):
    (repo / "knowledge" / "rdzv-closed.yaml").unlink()
    code, out, _ = _compare(repo, capsys, "HEAD", "--json")
    data = json.loads(out)
    assert code == 1
    assert data["before"]["top1"] > data["after"]["top1"]
    assert [c["id"] for c in data["changes"]] == ["rdzv"]
    assert data["worse"] and data["base_sha"] == _git(repo, "rev-parse", "HEAD").strip()


def test_a_knowledge_directory_that_did_not_exist_at_the_base_compares_as_all_new(repo: Path, capsys):
    _git(repo, "checkout", "-q", "--orphan", "empty")
    _git(repo, "rm", "-q", "-r", "--cached", "knowledge")
    _git(repo, "commit", "-q", "-m", "nothing yet")
    code, out, _ = _compare(repo, capsys, "empty")
    assert code == 0, out
    assert "quota (expects disk-quota): (nothing) -> disk-quota   [now right]" in out


@pytest.mark.parametrize(
    "ref",
    ["--upload-pack=touch /tmp/x", "main;rm -rf /", "main..HEAD", "$(id)", "main with space", "", "a" * 300],
)
def test_a_ref_that_could_be_an_option_a_range_or_a_shell_word_is_refused(repo: Path, capsys, ref: str):
    code, _, err = _compare(repo, capsys, ref)
    assert code == 2
    assert "is not a git ref this command accepts" in err


def test_a_ref_that_names_no_commit_says_so(repo: Path, capsys):
    code, _, err = _compare(repo, capsys, "no-such-branch")
    assert code == 2 and "'no-such-branch' does not name a commit" in err


def test_compare_outside_a_git_checkout_explains_what_it_needs(tmp_path: Path, capsys):
    require(shutil.which("git") is not None, "git")
    kb = write_kb(
        tmp_path / "plain" / "knowledge", [_entry("disk-quota", ["Disk quota exceeded"], CASES[0]["text"])]
    )
    cases = tmp_path / "plain" / "cases.jsonl"
    cases.write_text(json.dumps(CASES[0]) + "\n", encoding="utf-8")
    env_ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    try:
        code = main(["kb", "eval", str(cases), "--compare", "main", "--knowledge", str(kb)])
    finally:
        if env_ceiling is None:
            os.environ.pop("GIT_CEILING_DIRECTORIES")
        else:
            os.environ["GIT_CEILING_DIRECTORIES"] = env_ceiling
    assert code == 2
    assert "is not inside a git checkout" in capsys.readouterr().err


def test_the_base_side_reads_the_committed_entries_not_the_working_tree(repo: Path, capsys):
    edited = repo / "knowledge" / "disk-quota.yaml"
    data = yaml.safe_load(edited.read_text(encoding="utf-8"))
    data["recognise"]["anchors"] = ["quota exceeded on scratch"]
    edited.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, _ = _compare(repo, capsys)
    assert code == 0 and "no case changed answer" in out


def test_the_pull_request_workflow_runs_lint_examples_corpus_and_compare_with_real_commands():
    from tracebot.cli import build_parser

    workflow = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "pull-request.yml"
    doc = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    jobs = doc["jobs"]
    runs = "\n".join(step.get("run", "") for step in jobs["knowledge"]["steps"])
    for needed in (
        "tracebot kb lint",
        "pytest",
        "tests/kb",
        "tracebot kb eval tests/corpus/cases.jsonl",
        "--compare",
    ):
        assert needed in runs, f"the knowledge job does not run {needed!r}"
    assert jobs["knowledge"]["steps"][0]["with"]["fetch-depth"] == 0, "--compare needs the target branch"
    assert jobs["full"]["if"] == "needs.changes.outputs.knowledge_only != 'true'"
    parser = build_parser()
    for line in runs.splitlines():
        if ".venv/bin/tracebot " in line:
            argv = line.split(".venv/bin/tracebot ", 1)[1].split("|")[0].split()
            argv = [a.strip('"').replace("${BASE_REF}", "main") for a in argv]
            parser.parse_args(argv)  # exits (fails the test) on an unknown command or option
