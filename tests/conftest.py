"""Shared fixtures: the bundled knowledge base and its matcher (helpers live in tests/support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracebot.knowledge.loader import KnowledgeBase, load_knowledge_base
from tracebot.matcher import Matcher

REPO = Path(__file__).resolve().parent.parent
KNOWLEDGE = REPO / "knowledge"


@pytest.fixture(scope="session")
def bundled_kb() -> KnowledgeBase:
    kb, errors = load_knowledge_base(KNOWLEDGE)
    assert kb.entries, f"bundled knowledge base did not load: {errors[:5]}"
    return kb


@pytest.fixture(scope="session")
def matcher(bundled_kb: KnowledgeBase) -> Matcher:
    return Matcher(bundled_kb)
