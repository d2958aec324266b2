"""The knowledge model: one YAML file per entry (:mod:`.entry`) and the loader that reads a directory of
them (:mod:`.loader`). The lowest layer: it imports nothing else of tracebot."""

from tracebot.knowledge.entry import Entry, SchemaError
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base

__all__ = ["Entry", "KnowledgeBase", "LoadError", "SchemaError", "load_knowledge_base"]
