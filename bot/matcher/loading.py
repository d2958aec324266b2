"""The one way to read a knowledge directory and build its matcher (CLI, authoring tools, the service)."""

from __future__ import annotations

from pathlib import Path

from tracebot.config import DEFAULT_THRESHOLD
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base
from tracebot.matcher.core import Matcher


def load_matcher(
    directory: Path, threshold: float = DEFAULT_THRESHOLD
) -> tuple[KnowledgeBase, Matcher, list[LoadError]]:
    """The knowledge base under ``directory``, its matcher, and every problem met while loading it."""
    kb, errors = load_knowledge_base(Path(directory))
    return kb, Matcher(kb, threshold=threshold), errors
