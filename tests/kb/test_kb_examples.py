"""Every bundled entry carries its own proof: one test per example snippet (adding an entry adds tests).

match: the entry must come out first and confident. no_match: the entry must not be a confident match.
todo_match: known gaps, strict xfail — fixing one fails here until it is moved to match.
"""

from __future__ import annotations

import pytest

from tests.conftest import KNOWLEDGE
from tests.knowledge_ids import SEED_IDS
from tracebot.authoring.lint import check_example
from tracebot.knowledge.loader import load_knowledge_base

_KB, _ERRORS = load_knowledge_base(KNOWLEDGE)
CASES = [
    pytest.param(e.id, kind, i, id=f"{e.id}-{kind}-{i}")
    for e in _KB.entries
    for kind, texts in (("match", e.examples_match), ("no_match", e.examples_no_match), ("todo_match", e.examples_todo))
    for i in range(len(texts))
]


def test_bundled_knowledge_base_loads_without_problems():
    assert not _ERRORS, "\n".join(map(str, _ERRORS))


def test_every_entry_a_seed_document_asks_for_loads():
    assert SEED_IDS - {e.id for e in _KB.entries} == set()


@pytest.mark.parametrize("entry_id,kind,index", CASES)
def test_entry_example(matcher, bundled_kb, entry_id: str, kind: str, index: int):
    entry = bundled_kb.get(entry_id)
    text = {"match": entry.examples_match, "no_match": entry.examples_no_match, "todo_match": entry.examples_todo}[kind][index]
    result = check_example(matcher, entry, kind, index, text)
    if kind == "todo_match":
        if result.ok:
            pytest.fail(f"todo_match[{index}] of {entry_id} now passes: move it to examples.match")
        pytest.xfail(f"known gap: {result.detail}")
    assert result.ok, f"{entry_id} {kind}[{index}]: {result.detail}"
