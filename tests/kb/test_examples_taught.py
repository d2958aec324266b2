"""Every ``examples.match`` of an entry teaches the ranking model.

The model learns from the first ``MAX_TRAIN_PER_ENTRY`` match examples of each entry (its TF-IDF
texts and training samples); ``kb lint`` still checks the ones after that, so an entry with more looks
covered while its extra examples teach nothing. Put the most telling real examples first and drop the
weakest instead of appending past the limit.
"""

from __future__ import annotations

from pathlib import Path

from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher.model import MAX_TRAIN_PER_ENTRY

ROOT = Path(__file__).resolve().parents[2]


def test_no_entry_has_more_match_examples_than_the_model_learns_from():
    kb, errors = load_knowledge_base(ROOT / "knowledge")
    assert errors == []
    over = [f"{e.id}: {len(e.examples_match)}" for e in kb if len(e.examples_match) > MAX_TRAIN_PER_ENTRY]
    assert over == [], f"examples.match past the first {MAX_TRAIN_PER_ENTRY} are never learnt from: {over}"
