"""``knowledge/silence.yaml``: texts no entry may answer, checked like an entry file and trained on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import KNOWLEDGE
from tracebot.authoring.lint import silence_problems
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.knowledge.silence import Silence, normalise_url
from tracebot.matcher import Matcher
from tracebot.matcher.keys import model_key
from tracebot.matcher.training import training_texts

ENTRY = (
    "id: e-one\ntitle: T\nsummary: S\nrole: root-cause\nrecognise: {anchors: ['Boom happened']}\ncause: C\n"
    "fix: [F]\nsources: [{url: 'https://example.org/e'}]\nexamples: {match: ['Boom happened']}\n"
)


def _errors(tmp_path: Path, silence: str) -> list[str]:
    (tmp_path / "k" / "x").mkdir(parents=True)
    (tmp_path / "k" / "x" / "e-one.yaml").write_text(ENTRY)
    (tmp_path / "k" / "silence.yaml").write_text(silence)
    return [str(e) for e in load_knowledge_base(tmp_path / "k")[1]]


def test_the_bundled_silence_texts_load_with_kind_and_source():
    kb, errors = load_knowledge_base(KNOWLEDGE)
    assert errors == [] and kb.silence
    assert all(s.kind in ("chat", "fixed", "neighbour", "uncovered") for s in kb.silence)
    assert all(s.url.startswith("https://") or s.kind == "chat" for s in kb.silence)
    # the silence file is not read as an entry
    assert "silence" not in {e.id for e in kb.entries}


@pytest.mark.parametrize(
    ("silence", "error"),
    [
        ("silence:\n  - kind: chat\n    text: thanks\n",
         "k/silence.yaml:2: give the text's public source as 'url', or mark it 'invented: true' (one of the two)"),
        ("silence:\n  - kind: chat\n    invented: true\n    text: ok\n  - kind: gossip\n    invented: true\n    text: hi\n",
         "k/silence.yaml:5: 'kind' must be one of chat, fixed, neighbour, uncovered (got 'gossip')"),
        ("silence:\n  - kind: fixed\n    url: http://example.org/a\n    text: fixed it\n",
         "k/silence.yaml:2: 'url' must be an https:// address (got 'http://example.org/a')"),
        ("silence:\n  - kind: chat\n    invented: true\n    text: thanks\n    note: x\n",
         "k/silence.yaml:2: unknown key 'note' (known: invented, kind, text, url)"),
        ("silence:\n  - {kind: chat, invented: true, text: Thanks}\n  - {kind: chat, invented: true, text: thanks}\n",
         "k/silence.yaml:3: the same text is at line 2"),
        ("texts: []\n", "k/silence.yaml:1: unknown key 'texts' (only 'silence')"),
        ("silence:\n  - {kind: chat, invented: true, text: &a hi}\n",
         "k/silence.yaml:2: YAML: YAML anchors (&a) are not allowed in knowledge files"),
        ("silence:\n  - kind: chat\n    invented: true\n    text: thanks\n    text: ignore all entries\n",
         "k/silence.yaml:5: YAML: duplicate key 'text' (first on line 4); the second would silently win"),
    ],
)
def test_a_bad_silence_file_is_reported_with_its_line(tmp_path, silence, error):
    assert error in _errors(tmp_path, silence)


def test_at_most_two_texts_come_from_one_source(tmp_path):
    items = "".join(f"  - {{kind: fixed, url: 'https://github.com/o/r/issues/1#c{i}', text: 'fix {i}'}}\n" for i in range(3))
    assert _errors(tmp_path, "silence:\n" + items) == [
        "k/silence.yaml:4: more than 2 texts from github.com/o/r/issues/1 (lines [2, 3, 4])"
    ]


def test_a_silence_text_copied_from_a_left_out_source_does_not_train():
    kb, _ = load_knowledge_base(KNOWLEDGE)
    entries = kb.entries
    silence = [Silence("fixed it by upgrading, thanks", "fixed", "https://github.com/o/r/issues/7")]
    kept = training_texts(entries, (), (), (), silence)[0]
    assert "fixed it by upgrading, thanks" in [s.text for s in kept]
    # a case's source written another way (fragment, trailing slash, scheme case) is the same thread
    hidden = training_texts(entries, {"HTTPS://github.com/o/r/issues/7/#issuecomment-1"}, (), (), silence)[0]
    assert "fixed it by upgrading, thanks" not in [s.text for s in hidden]
    assert normalise_url("https://www.GitHub.com/o/r/issues/7?x=1#c") == "github.com/o/r/issues/7"


def test_every_candidate_of_a_silence_text_is_a_wrong_answer():
    kb, _ = load_knowledge_base(KNOWLEDGE)
    samples = training_texts(kb.entries, (), (), (), kb.silence[:3])[0]
    mine = [s for s in samples if s.text in {t.text for t in kb.silence[:3]}]
    assert mine and all(s.gold == -1 and s.only == -1 for s in mine)


def test_the_models_cache_key_changes_with_the_silence_texts():
    kb, _ = load_knowledge_base(KNOWLEDGE)
    assert model_key(kb.entries, kb.silence) != model_key(kb.entries, kb.silence[:-1])
    assert model_key(kb.entries, kb.silence) == model_key(kb.entries, list(kb.silence))


def test_lint_fails_on_a_silence_text_that_gets_a_confident_answer(tmp_path):
    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, root)
    kb, _ = load_knowledge_base(KNOWLEDGE)
    paste = kb.get("cuda-oom").examples_match[0]  # confidently answered by its anchor
    with (root / "silence.yaml").open("a", encoding="utf-8") as f:
        f.write(f"  - kind: uncovered\n    url: https://example.org/not-really\n    text: {json.dumps(paste)}\n")
    kb2, errors = load_knowledge_base(root)
    assert errors == []
    problems = [str(p) for p in silence_problems(kb2, Matcher(kb2))]
    line = kb2.silence[-1].line
    assert problems and problems[-1].startswith(f"{root / 'silence.yaml'}:{line}: silence text (uncovered) confidently answered by cuda-oom")


def test_an_example_that_is_also_a_silence_text_is_named_at_the_examples_own_line(tmp_path):
    # The entry's author touched only their entry; the one sign was the silence text's line in silence.yaml
    # ("confidently answered by ..."), or nothing at all when the contradiction left neither confident.
    from tracebot.authoring.lint import lint

    (tmp_path / "k" / "x").mkdir(parents=True)
    entry = tmp_path / "k" / "x" / "e-one.yaml"
    entry.write_text(ENTRY.replace("match: ['Boom happened']", "match: ['Boom happened', 'Thanks,  that fixed it!']"))
    (tmp_path / "k" / "silence.yaml").write_text(
        "silence:\n  - kind: chat\n    invented: true\n    text: \"thanks, that fixed it!\"\n")
    _, problems = lint(tmp_path / "k", examples=False)
    assert [str(p) for p in problems] == [
        f"{entry}:9: examples.match[1] is also a silence text (silence.yaml:2), a text no entry may answer: keep "
        "it in one of the two places"
    ]
