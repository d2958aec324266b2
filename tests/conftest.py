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


@pytest.fixture
def debug_log():
    """tracebot's own log set-up (``configure_logging``, as ``serve``/``run`` do) at DEBUG, into a string;
    the root logger's handlers and level are put back afterwards."""
    import io
    import logging

    from tracebot.cli import configure_logging
    from tracebot.config import Config

    root = logging.getLogger()
    saved_level, saved_filters = root.level, {h: list(h.filters) for h in root.handlers}
    installed: list[logging.Handler] = []

    def start(config: Config | None = None) -> io.StringIO:
        config = config or Config()
        config.log_level = "DEBUG"
        stream = io.StringIO()
        installed.append(configure_logging(config, stream))
        return stream

    yield start
    for handler in installed:
        root.removeHandler(handler)
    for handler, filters in saved_filters.items():
        handler.filters[:] = filters
    root.setLevel(saved_level)
