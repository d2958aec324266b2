"""The loader names the file and line of every problem and keeps loading the good entries."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from tests.support import entry_dict, write_kb
from tracebot.knowledge.loader import load_knowledge_base


def problems(root: Path) -> list[str]:
    return [str(e) for e in load_knowledge_base(root)[1]]


def test_a_wrong_role_names_its_file_and_line(tmp_path: Path):
    root = write_kb(tmp_path / "kb", [entry_dict("good"), entry_dict("bad", role="cause")])
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good"]
    (err,) = errors
    lines = (root / "bad.yaml").read_text().splitlines()
    assert err.path.endswith("bad.yaml") and lines[err.line - 1].startswith("role:")
    assert "'role' must be one of root-cause, symptom" in err.message


def test_missing_keys_unknown_keys_and_empty_recognise_are_all_reported(tmp_path: Path):
    bad = entry_dict("bad", recognise={}, colour="blue")
    del bad["fix"]
    root = write_kb(tmp_path / "kb", [bad])
    text = "\n".join(problems(root))
    assert "missing required key 'fix'" in text
    assert "unknown key 'colour'" in text
    assert "needs at least one of anchors, regex, exemplars, phrases" in text


def test_yaml_syntax_error_gives_the_line(tmp_path: Path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "broken.yaml").write_text("id: broken\ntitle: [unclosed\nsummary: x\n")
    (err,) = problems(root)
    assert err.startswith(f"{Path('kb') / 'broken.yaml'}:") and "YAML" in err


GOOD_TEXT = yaml.safe_dump(entry_dict("slip"), sort_keys=False)


def test_the_yaml_slips_authors_make_say_what_to_do_at_their_line(tmp_path: Path):
    # A tab, a list item indented one space too far and "Fix: this" unquoted were each named with PyYAML's
    # words only ("found character '\t' that cannot start any token", "expected <block end>, but found
    # '<block sequence start>'", "'fix' item 2 must be a non-empty string"), which do not say what to change.
    slips = {
        "tab": GOOD_TEXT.replace("role: root-cause", "role:\troot-cause").replace("\nrecognise:", "\n\trecognise:"),
        "indent": GOOD_TEXT.replace("fix:\n- A fix.", 'fix:\n  - "A fix."\n   - "Another fix."'),
        "colon": GOOD_TEXT.replace("fix:\n- A fix.", "fix:\n- A fix.\n- Reshard: into smaller shards."),
        "number": GOOD_TEXT.replace("fix:\n- A fix.", "fix:\n- A fix.\n- 8"),
    }
    said = {}
    for name, text in slips.items():
        assert text != GOOD_TEXT, name
        root = tmp_path / name
        root.mkdir()
        (root / "slip.yaml").write_text(text)
        (err,) = problems(root)
        said[name] = err
    assert "replace the tab with spaces" in said["tab"]
    assert "start in the same column" in said["indent"]
    colon_line = slips["colon"].splitlines().index("- Reshard: into smaller shards.") + 1
    assert f":{colon_line}: 'fix' item 2" in said["colon"] and "put the text in quotes" in said["colon"]
    assert "YAML read it as '8', not text: put it in quotes" in said["number"]


def test_duplicate_ids_and_id_not_matching_file_name(tmp_path: Path):
    root = write_kb(tmp_path / "kb", [entry_dict("one")])
    sub = root / "more"
    sub.mkdir()
    (sub / "one.yaml").write_text(yaml.safe_dump(entry_dict("one")))
    (sub / "two.yaml").write_text(yaml.safe_dump(entry_dict("three")))
    text = "\n".join(problems(root))
    assert "duplicate id 'one'" in text
    assert "id 'three' must equal the file name 'two'" in text


def test_backtracking_regex_constructs_are_refused_as_not_linear_time(tmp_path: Path):
    root = write_kb(
        tmp_path / "kb",
        [entry_dict("bt", recognise={"regex": [r"(a+)+\1", r"(?=lookahead)x", r".*"]})],
    )
    text = "\n".join(problems(root))
    assert text.count("is not valid RE2 (linear-time) syntax") == 2
    assert "matches the empty string" in text


def test_a_refused_lookahead_or_backreference_says_what_to_write_instead_and_nothing_else(tmp_path: Path, capfd):
    # RE2's refusal came as a bytes repr (b'invalid perl operator: (?=') under two absl log lines on
    # stderr ("WARNING: All log messages before absl::InitializeLog()...", "E0000 ... re2.cc:242]"), and
    # said nothing of what an author should write instead.
    root = write_kb(tmp_path / "kb", [entry_dict("bt", recognise={"regex": [r"underrun(?= on)", r"(shard)\1"]})])
    text = "\n".join(problems(root))
    assert "b'" not in text
    assert "invalid perl operator: (?= (RE2 has no lookaround" in text and "`unless:`" in text
    assert "invalid escape sequence: \\1 (RE2 has no backreferences" in text
    assert capfd.readouterr().err == ""


def test_too_short_anchor_and_oversized_pattern_are_refused(tmp_path: Path):
    root = write_kb(tmp_path / "kb", [entry_dict("s", recognise={"anchors": ["NCCL", "x" * 600]})])
    text = "\n".join(problems(root))
    assert "too short to be specific" in text and "the limit is 500" in text


def test_related_entries_must_exist(tmp_path: Path):
    root = write_kb(tmp_path / "kb", [entry_dict("a", related=["nope"])])
    assert any("related entry 'nope' does not exist" in p for p in problems(root))


def test_a_missing_directory_is_an_error_not_a_crash(tmp_path: Path):
    kb, errors = load_knowledge_base(tmp_path / "absent")
    assert not kb.entries and "not found" in errors[0].message


def test_a_key_written_twice_is_an_error_naming_both_lines(tmp_path: Path):
    root = write_kb(tmp_path / "kb", [entry_dict("good")])
    text = (root / "good.yaml").read_text()
    (root / "twice.yaml").write_text(text.replace("id: good", "id: twice") + "summary: the second summary\n")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good"], "the file with the repeated key is left out"
    (err,) = errors
    lines = (root / "twice.yaml").read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("summary:"))
    assert err.path.endswith("twice.yaml") and err.line == len(lines)
    assert f"duplicate key 'summary' (first on line {first})" in err.message


def test_an_empty_knowledge_directory_is_an_error_not_zero_entries(tmp_path: Path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "README.md").write_text("entries go here\n")
    kb, errors = load_knowledge_base(root)
    assert not kb.entries
    (err,) = errors
    assert err.path == str(root) and "no knowledge entries" in err.message


def _unreadable(monkeypatch, folder: Path) -> None:
    """``folder`` as a service user meets a folder it may not list (tests run as root, who may list any)."""
    real = os.scandir

    def scandir(path=".", *args):
        if os.path.realpath(os.fspath(path)) == os.path.realpath(folder):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)


def test_a_folder_of_entries_that_cannot_be_read_is_named_not_skipped_in_silence(tmp_path: Path, monkeypatch):
    # pathlib's rglob skips a folder it may not list without a word: every entry in it went missing from
    # the answers and `kb lint` said "ok"
    root = write_kb(tmp_path / "kb", [entry_dict("good")])
    write_kb(root / "nccl", [entry_dict("hidden")])
    _unreadable(monkeypatch, root / "nccl")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good"]
    assert [str(e) for e in errors] == ["kb/nccl:1: folder cannot be read (Permission denied): no entry in it was loaded"]


def test_a_file_given_as_the_knowledge_folder_is_called_a_file_not_missing(tmp_path: Path, capsys):
    from tracebot.cli import main

    given = tmp_path / "cuda-oom.yaml"  # `--knowledge knowledge/cuda/cuda-oom.yaml`: one entry meant
    given.write_text("id: cuda-oom\n")
    assert problems(given) == [f"{given}:1: not a directory: give the knowledge folder"]
    assert main(["kb", "lint", "--knowledge", str(given), "--no-examples"]) == 1
    assert f"{given}:1: not a directory" in capsys.readouterr().out


def test_a_link_to_a_folder_of_entries_is_named_not_followed_nor_skipped_in_silence(tmp_path: Path):
    # never followed (it could lead anywhere the service user can read), and before this never said either:
    # an author who linked a folder of entries in saw none of them answer, and `kb lint` said ok
    root = write_kb(tmp_path / "kb", [entry_dict("good")])
    write_kb(tmp_path / "elsewhere", [entry_dict("linked")])
    (root / "team").symlink_to(tmp_path / "elsewhere")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good"]
    assert [str(e) for e in errors] == ["kb/team:1: a symbolic link to a folder: not followed: no entry in it was loaded"]
