"""Contributed entries are data, never code: hostile files are refused with a clear message, quickly,
and never stop the rest of the knowledge base from loading."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support import entry_dict, require, write_kb
from tracebot.authoring.clean_corpus import DEFAULT_CLEAN_DIR, clean_corpus_problems, clean_logs
from tracebot.authoring.lint import lint
from tracebot.cli import main
from tracebot.knowledge import loader
from tracebot.knowledge.loader import MAX_FILE_BYTES, KnowledgeBase, compile_pattern, load_knowledge_base
from tracebot.knowledge.pattern_shape import nested_repetition
from tracebot.matcher import Matcher

GOOD = yaml.safe_dump(entry_dict("good-entry"))

BILLION_LAUGHS = """\
id: lol
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _kb_with(tmp_path: Path, name: str, text: str | bytes) -> tuple[KnowledgeBase, list[str]]:
    root = tmp_path / "knowledge"
    root.mkdir(exist_ok=True)
    (root / "good-entry.yaml").write_text(GOOD, encoding="utf-8")
    target = root / name
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good-entry"], "a hostile file must not stop the good one loading"
    return kb, [str(e) for e in errors if name in e.path]


@pytest.mark.parametrize(
    "text",
    [
        'id: !!python/object/apply:os.system ["touch {marker}"]\n',
        "id: !!python/object/new:subprocess.Popen [[touch, {marker}]]\n",
        "id: !!python/name:os.system\n",
    ],
)
def test_a_yaml_tag_that_would_construct_an_object_is_refused_and_never_runs(tmp_path: Path, text: str):
    marker = tmp_path / "pwned"
    _, errors = _kb_with(tmp_path, "evil.yaml", text.format(marker=marker))
    assert (
        len(errors) == 1
        and "is not allowed: an entry is plain data, it never constructs objects" in errors[0]
    )
    assert errors[0].startswith(f"{tmp_path.name}/evil.yaml:1:") or ":1: " in errors[0]
    assert not marker.exists()


def test_a_custom_tag_is_refused_naming_it(tmp_path: Path):
    _, errors = _kb_with(tmp_path, "tagged.yaml", "id: x\ntitle: !Regexp '.*'\n")
    assert errors == [
        f"{Path('knowledge/tagged.yaml')}:2: YAML: tag '!Regexp' is not allowed: an entry is plain data, it never constructs objects"
    ]


def test_a_billion_laughs_alias_bomb_is_refused_at_its_first_anchor(tmp_path: Path):
    _, errors = _kb_with(tmp_path, "lol.yaml", BILLION_LAUGHS)
    assert errors == [
        f"{Path('knowledge/lol.yaml')}:2: YAML: YAML anchors (&a) are not allowed in knowledge files"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "id: x\ntitle: &t a title\n",  # after "key: "
        "id: x\nanchors:\n- &t a line\n",  # after "- "
        "id: x\nanchors: [a, &t b]\n",  # in flow, after ","
        'id: x\nrecognise: {"anchors":&t [a]}\n',  # in flow, right after ":"
        "id: x\ntitle:\n  &t a title\n",  # at a line's start
        "id: x\ntitle:\u2028  &t a title\n",  # after a line break YAML counts and str.splitlines too
    ],
)
def test_an_anchor_wherever_a_node_may_begin_is_refused_with_its_line(tmp_path: Path, text: str):
    # the plain files skip libyaml's events (a text check says they cannot hold an anchor): the check
    # must not miss one, or an alias bomb would be parsed by the fast path
    _, errors = _kb_with(tmp_path, "anchored.yaml", text)
    assert len(errors) == 1 and "YAML anchors (&t) are not allowed" in errors[0]


@pytest.mark.parametrize(
    "text",
    [
        "id: merged\ntitle: one title\n<<: {title: another title}\n",  # the key given twice, unseen
        "id: merged\nrecognise:\n  <<: [{regex: [a]}, {anchors: [abcdef]}]\n",  # keys no reviewer sees
    ],
)
def test_a_merge_key_is_refused_with_its_line(tmp_path: Path, text: str):
    # "<<" copies keys into a mapping: the repeated-key rule would not see a key given twice that way
    _, errors = _kb_with(tmp_path, "merged.yaml", text)
    line = text[: text.index("<<")].count("\n") + 1
    assert errors == [f"{Path('knowledge/merged.yaml')}:{line}: YAML: merge keys (<<) are not allowed in knowledge files: write each key once"]


@pytest.mark.parametrize("name", ("silence.yaml", "sources.yaml"))
def test_a_merge_key_beside_the_entries_is_refused_with_its_line(tmp_path: Path, name: str):
    _, errors = _kb_with(tmp_path, name, "x.md:\n  title: a\n  <<: {title: b}\n")
    assert errors == [f"{Path('knowledge', name)}:3: YAML: merge keys (<<) are not allowed in knowledge files: write each key once"]


def test_block_nesting_deeper_than_the_fast_path_allows_is_read_by_the_careful_loader(tmp_path: Path):
    nested = "".join(" " * i + f"k{i}:\n" for i in range(1, 60)) + " " * 60 + "leaf\n"
    text = "id: deep-block\nrecognise:\n" + nested
    assert loader._fast_parse(text) is None  # what the name says (either loader gives the errors below)
    _, errors = _kb_with(tmp_path, "deep-block.yaml", text)
    # parsed (the schema then says what is wrong with it), neither a crash nor a YAML error
    assert errors and not any("YAML" in e for e in errors)


def test_nesting_two_levels_per_column_of_indentation_is_not_taken_for_shallow():
    # "k:" then "-" at the same column, the next key one space further: two levels per column, so an
    # indentation check that allowed one per column would let a file past the depth limit skip the events
    text = "".join(" " * c + f"k{c}:\n" + " " * c + "-\n" for c in range(20)) + " " * 20 + "leaf\n"
    assert yaml.safe_load(text) is not None  # valid YAML, 40 levels deep
    assert loader._fast_parse(text) is None, f"nested deeper than {loader.MAX_FAST_DEPTH}: the careful loader reads it"


def test_an_asterisk_inside_quotes_or_a_block_is_an_ordinary_character(tmp_path: Path):
    entry = entry_dict("starred")
    entry["title"] = "*** JOB 42 CANCELLED ***"
    entry["recognise"]["regex"] = [r"slurmstepd: error: \*\*\* JOB \d+ .*CANCELLED"]
    kb, errors = load_knowledge_base(write_kb(tmp_path / "knowledge", [entry]))
    assert errors == []
    assert kb.entries[0].title == "*** JOB 42 CANCELLED ***"


def test_a_10_mb_regex_is_refused_by_size_before_it_is_parsed(tmp_path: Path):
    huge = "id: big\nrecognise:\n  regex:\n    - '" + "(a|b)" * (2 << 20) + "'\n"
    _, errors = _kb_with(tmp_path, "big.yaml", huge)
    assert errors == [
        f"{Path('knowledge/big.yaml')}:1: file is {len(huge)} bytes; the limit is {MAX_FILE_BYTES}"
    ]


def test_a_regex_under_the_file_limit_but_over_the_pattern_limit_is_refused(tmp_path: Path):
    text = yaml.safe_dump(entry_dict("long-re", recognise={"regex": ["x" * 100_000]}))
    _, errors = _kb_with(tmp_path, "long-re.yaml", text)
    assert any("is 100000 characters; the limit is 500" in e for e in errors), errors


def test_a_regex_whose_compiled_program_would_be_huge_is_refused(tmp_path: Path):
    text = yaml.safe_dump(entry_dict("blowup", recognise={"regex": ["((a{100}){100}){100}"]}))
    _, errors = _kb_with(tmp_path, "blowup.yaml", text)
    assert any("is not valid RE2 (linear-time) syntax" in e for e in errors), errors


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(x+x+)+y", r"(.*a){20}", r"(?:\w+\s)+x", r"((ab)+c)+"])
def test_lint_refuses_catastrophic_backtracking_shapes_naming_the_group(tmp_path: Path, pattern: str):
    root = write_kb(
        tmp_path / "knowledge",
        [entry_dict("bt", recognise={"regex": [pattern]}, examples={"match": ["x" * 30 + "y"]})],
    )
    _, problems = lint(root, examples=False)
    msgs = [p.message for p in problems if "repeats a group that itself repeats" in p.message]
    assert len(msgs) == 1 and f"({nested_repetition(pattern)})" in msgs[0]


def test_a_refused_regex_is_named_and_steals_no_other_entrys_examples(tmp_path: Path):
    # '(a+)+b' fires on nearly any text: lint listed every other entry's example it stole, and the one line
    # saying what to change came last, under a screenful of other people's entries. The loader refuses the
    # shape now, so the entry is left out and the author reads that one line.
    others = [
        entry_dict(f"victim-{i}", recognise={"anchors": [f"unable to open shard {i}"]},
                   examples={"match": [f"OSError: unable to open shard {i}"]})
        for i in range(5)
    ]
    greedy = entry_dict("bt", priority=90, recognise={"regex": [r"(a+)+b"]}, examples={"match": ["aab"]})
    root = write_kb(tmp_path / "knowledge", [*others, greedy])
    _, problems = lint(root)
    said = [p.message for p in problems]
    assert len(said) == 1 and "repeats a group that itself repeats ((a+)+)" in said[0], said


@pytest.mark.parametrize("pattern", [r"\[Rank \d+\] Watchdog", r"(\d+)?x", r"(a|b)+", r"[(]+)+z", r"(ab\+)+"])
def test_ordinary_repetitions_are_not_mistaken_for_nested_ones(pattern: str):
    assert nested_repetition(pattern) is None


@pytest.mark.timeout(30)
def test_even_a_backtracking_shape_runs_in_linear_time_in_the_bot(tmp_path: Path):
    """The loader refuses the shape, and compiles what it accepts with RE2: a backtracking shape that got
    past the shape check would still run in linear time (Python's re takes hours on these texts)."""
    text = "a" * 50_000 + "!\n" + "x" * 50_000
    for n, pattern in enumerate((r"(a+)+$", r"(x+x+)+y")):
        assert compile_pattern(pattern).search(text) is None
        (tmp_path / str(n)).mkdir()
        _, errors = _kb_with(tmp_path / str(n), "bt.yaml", yaml.safe_dump(entry_dict("bt", recognise={"regex": [pattern]})))
        assert any("repeats a group that itself repeats" in e for e in errors), errors


def test_yaml_nested_thousands_deep_is_refused_not_a_crash(tmp_path: Path):
    _, errors = _kb_with(tmp_path, "deep.yaml", "id: x\nrecognise: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert errors == [
        f"{Path('knowledge/deep.yaml')}:1: YAML: nested too deeply (knowledge files are only a few levels deep)"
    ]


def test_a_control_character_in_an_entry_is_refused_with_its_line(tmp_path: Path):
    _, errors = _kb_with(tmp_path, "ctl.yaml", b'id: x\ntitle: "red \x1b[31m"\n')
    assert errors == [f"{Path('knowledge/ctl.yaml')}:2: YAML: character #x001b is not allowed in YAML text"]


def test_kb_lint_prints_each_hostile_file_with_its_line_and_fails(tmp_path: Path, capsys):
    root = tmp_path / "knowledge"
    _kb_with(tmp_path, "lol.yaml", BILLION_LAUGHS)
    (root / "evil.yaml").write_text('id: !!python/object/apply:os.system ["true"]\n', encoding="utf-8")
    assert main(["kb", "lint", "--knowledge", str(root)]) == 1
    out = capsys.readouterr().out
    assert "lol.yaml:2: YAML: YAML anchors (&a) are not allowed" in out
    assert "evil.yaml:1: YAML: tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed" in out


SIDE_FILES = ("silence.yaml", "sources.yaml")  # beside the entries, and contributed by pull request too


@pytest.mark.parametrize("name", SIDE_FILES)
def test_a_huge_file_beside_the_entries_is_refused_by_size_naming_it(tmp_path: Path, name: str):
    huge = "x.md: {title: '" + "a" * (2 << 20) + "'}\n"
    _, errors = _kb_with(tmp_path, name, huge)
    assert errors == [f"{Path('knowledge', name)}:1: file is {len(huge)} bytes; the limit is {MAX_FILE_BYTES}"]


@pytest.mark.parametrize("name", SIDE_FILES)
def test_an_alias_bomb_beside_the_entries_is_refused_at_its_first_anchor(tmp_path: Path, name: str):
    _, errors = _kb_with(tmp_path, name, BILLION_LAUGHS)
    assert errors == [f"{Path('knowledge', name)}:2: YAML: YAML anchors (&a) are not allowed in knowledge files"]


@pytest.mark.parametrize("name", SIDE_FILES)
def test_yaml_nested_thousands_deep_beside_the_entries_is_refused_not_a_crash(tmp_path: Path, name: str):
    _, errors = _kb_with(tmp_path, name, "silence: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert errors == [f"{Path('knowledge', name)}:1: YAML: nested too deeply (knowledge files are only a few levels deep)"]


@pytest.mark.parametrize("name", ("an-entry.yaml", *SIDE_FILES))
@pytest.mark.parametrize(
    ("value", "why"),
    [("2024-13-45", "timestamp (month must be in 1..12)"), ("1" * 5000, "int (Exceeds the limit (4300 digits)")],
)
def test_a_value_that_reads_as_a_date_or_number_but_is_none_is_refused_with_its_line(
    tmp_path: Path, name: str, value: str, why: str
):
    # PyYAML turns such a plain scalar into a date or an int, and Python raises a bare ValueError:
    # one such value must not crash the whole load (kb lint, the bot's reload)
    _, errors = _kb_with(tmp_path, name, f"x.md:\n  title: a\n  when: {value}\n")
    assert len(errors) == 1 and errors[0].startswith(f"{Path('knowledge', name)}:3: YAML: "), errors
    assert f"is not a valid {why}" in errors[0] and errors[0].endswith("quote it to keep it as text")


@pytest.mark.parametrize("name", SIDE_FILES)
@pytest.mark.parametrize("kind", ["directory", "device", "broken link"])
def test_a_file_beside_the_entries_that_is_not_a_regular_file_is_reported_not_ignored(
    tmp_path: Path, name: str, kind: str
):
    # a silence.yaml that is a directory would silently drop every silence text; a link to a device
    # (/dev/zero reports 0 bytes) would never finish reading
    root = tmp_path / "knowledge"
    root.mkdir()
    (root / "good-entry.yaml").write_text(GOOD, encoding="utf-8")
    if kind == "directory":
        (root / name).mkdir()
    else:
        (root / name).symlink_to("/dev/zero" if kind == "device" else tmp_path / "missing")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good-entry"]
    assert [str(e) for e in errors] == [f"{Path('knowledge', name)}:1: not a regular file: nothing in it was read"]


def test_a_document_without_a_title_in_sources_is_named_with_its_line(tmp_path: Path):
    text = "a.md:\n  title: A\nb.md:\n  url: https://example.com/b\n"
    _, errors = _kb_with(tmp_path, "sources.yaml", text)
    assert errors == [f"{Path('knowledge/sources.yaml')}:3: document 'b.md' needs a 'title' (and a public 'url' if it has one)"]


HEALTHY = [
    "[default0]: iteration      100/  500000 | consumed samples: 51200 | lm loss: 7.1234E+00 | grad norm: 1.234\n",
    "algo-1: [1,mpirank:0,algo-1]<stdout>: step 200 loss 2.91 throughput 512 samples/s\n",
    "0: epoch 1 step 300 loss 2.55 lr 3.0e-4\n",
    "slurm0-a3-ghpc-8: [rank0]: iteration 400 lm loss 2.31 learning rate 3.0E-04\n",
    "[rank0]: saving checkpoint at iteration 500 to /checkpoints/iter_0000500\n",
]


def _clean_dir(tmp_path: Path) -> Path:
    clean = tmp_path / "clean"
    clean.mkdir()
    for i, text in enumerate(HEALTHY):
        (clean / f"healthy_{i}.log").write_text(
            "# source: written for this test\n" + text * 3, encoding="utf-8"
        )
    (clean / "README.md").write_text("loss loss loss\n", encoding="utf-8")
    return clean


def test_an_entry_matching_a_large_share_of_clean_logs_is_refused_with_the_lines_it_matched(tmp_path: Path):
    clean = _clean_dir(tmp_path)
    root = write_kb(
        tmp_path / "knowledge",
        [
            entry_dict("greedy", recognise={"regex": [r"loss:? \d"]}, examples={"match": ["lm loss: 7.1"]}),
            entry_dict("specific", recognise={"anchors": ["saving checkpoint at iteration"]}),
        ],
    )
    kb, _ = load_knowledge_base(root)
    problems = clean_corpus_problems(kb, Matcher(kb), clean)
    assert len(problems) == 1, problems
    (p,) = problems
    assert p.path.endswith("greedy.yaml") and p.line == kb.get("greedy").line_of("recognise.regex.0")
    assert "greedy matches 4 of 5 clean logs (80%; the limit is 20%)" in p.message
    assert "healthy_0.log:2: [default0]: iteration      100/  500000" in p.message
    assert "Make its regex 'loss:? \\\\d' more specific" in p.message


def test_the_bundled_knowledge_base_passes_the_clean_corpus_check():
    require(bool(clean_logs(DEFAULT_CLEAN_DIR)), f"clean logs under {DEFAULT_CLEAN_DIR}")
    kb, _ = load_knowledge_base(Path(__file__).resolve().parents[2] / "knowledge")
    assert clean_corpus_problems(kb, Matcher(kb)) == []


def test_kb_lint_refuses_a_contributed_entry_that_fires_on_the_real_clean_corpus(tmp_path: Path, capsys):
    require(bool(clean_logs(DEFAULT_CLEAN_DIR)), f"clean logs under {DEFAULT_CLEAN_DIR}")
    root = write_kb(
        tmp_path / "knowledge",
        [
            entry_dict(
                "nccl-anything", recognise={"regex": [r"NCCL INFO"]}, examples={"match": ["NCCL INFO x"]}
            )
        ],
    )
    assert main(["kb", "lint", "--knowledge", str(root)]) == 1
    out = capsys.readouterr().out
    assert "nccl-anything matches" in out and "clean logs" in out and "it would answer on healthy jobs" in out


@pytest.mark.parametrize("name", ["linked-entry.yaml", "silence.yaml", "sources.yaml"])
def test_a_linked_knowledge_file_is_refused_and_its_target_never_read(tmp_path: Path, name: str):
    # A pull request can add a link; followed, it would make tracebot parse (and quote in its errors) any
    # file the service user can read.
    secret = tmp_path / "elsewhere" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text("id: not-for-you\npassword: hunter2\n", encoding="utf-8")
    root = tmp_path / "knowledge"
    root.mkdir()
    (root / "good-entry.yaml").write_text(GOOD, encoding="utf-8")
    (root / name).symlink_to(secret)
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good-entry"]
    shown = [str(e) for e in errors]
    assert shown == [f"{Path('knowledge', name)}:1: a symbolic link: not read (a knowledge file must be the file itself)"]
    assert not any("hunter2" in s or "not-for-you" in s or "password" in s for s in shown)


def test_a_dangling_link_named_like_an_entry_is_reported_not_skipped(tmp_path: Path):
    root = tmp_path / "knowledge"
    root.mkdir()
    (root / "good-entry.yaml").write_text(GOOD, encoding="utf-8")
    (root / "gone.yaml").symlink_to(tmp_path / "missing.yaml")
    kb, errors = load_knowledge_base(root)
    assert [e.id for e in kb.entries] == ["good-entry"]
    assert [str(e) for e in errors] == [
        f"{Path('knowledge', 'gone.yaml')}:1: a symbolic link: not read (a knowledge file must be the file itself)"
    ]


def test_the_cache_key_sees_a_link_retargeted_and_never_blocks_on_a_fifo(tmp_path: Path):
    import os

    from tracebot.knowledge.cache import tree_hash

    root = tmp_path / "knowledge"
    root.mkdir()
    (root / "good-entry.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "a.yaml").write_text("a", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("b", encoding="utf-8")
    (root / "link.yaml").symlink_to(tmp_path / "a.yaml")
    first = tree_hash(root)
    (root / "link.yaml").unlink()
    (root / "link.yaml").symlink_to(tmp_path / "b.yaml")
    assert tree_hash(root) != first
    os.mkfifo(root / "pipe.yaml")  # no writer: opening it for reading the usual way would wait forever
    assert len(tree_hash(root)) == 24


def test_a_fifo_named_like_an_entry_is_refused_without_waiting_for_a_writer(tmp_path: Path):
    import os

    from tracebot.knowledge.loader import parse_entry_file

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # no writer: a plain open-and-read would wait forever
    entry, errors = parse_entry_file(fifo, "knowledge/pipe.yaml")
    assert entry is None
    assert [str(e) for e in errors] == ["knowledge/pipe.yaml:1: not a regular file: nothing in it was read"]
