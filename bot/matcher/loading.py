"""The one way to read a knowledge directory and build its matcher (CLI, authoring tools, the service).

The built matcher is cached (:mod:`tracebot.knowledge.cache`): the parsed entries, the load errors and
the compiled index (:class:`~tracebot.matcher.index.CompiledKB`, whose Hyperscan database is stored
serialized and whose regexes are compiled again on first use) in one file, under a hash of every file
under the knowledge directory (names and bytes), of the loader's and the matcher's code, and of the
versions of the libraries that compiled it. Any change under ``knowledge/`` or to that code gives a new
key; an unreadable cache file is rebuilt. The trained ranking model is cached by the model itself
(:func:`tracebot.matcher.model.load_or_train`), under a key from the same hash of the files and code
that leaves out where the directory is, so copies of one knowledge base share it (and a warm start
hashes nothing more than the files).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracebot.config import DEFAULT_THRESHOLD
from tracebot.knowledge.cache import cached, tree_hash
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base

if TYPE_CHECKING:
    from tracebot.matcher.core import Matcher
    from tracebot.matcher.index import CompiledKB

CACHE_VERSION = 1
_PACKAGE = Path(__file__).resolve().parent.parent  # tracebot/


def load_matcher(
    directory: Path, threshold: float = DEFAULT_THRESHOLD, *, model: bool | None = None
) -> tuple[KnowledgeBase, Matcher, list[LoadError]]:
    """The knowledge base under ``directory``, its matcher, and every problem met while loading it.

    ``model``: use the ranking model (``None``: unless ``$TRACEBOT_MODEL`` is ``0``)."""
    kb, errors, index = load_compiled(Path(directory))
    return kb, matcher_of(kb, index, threshold, model=model), errors


def matcher_of(
    kb: KnowledgeBase, index: CompiledKB, threshold: float = DEFAULT_THRESHOLD, *, model: bool | None = None
) -> Matcher:
    """The matcher over ``index`` (from :func:`load_compiled`), with its ranking model from the model's
    own cache (trained and stored when missing)."""
    from tracebot.matcher.core import Matcher

    if model is None:
        model = os.environ.get("TRACEBOT_MODEL", "1") != "0"
    matcher = Matcher(kb, threshold=threshold, model=False, index=index)
    if model and matcher.can_train:
        matcher.model = matcher.train_model()
    return matcher


def load_compiled(directory: Path) -> tuple[KnowledgeBase, list[LoadError], CompiledKB]:
    """(knowledge base, load errors, compiled index), from the cache when nothing changed."""
    from tracebot.matcher.index import CompiledKB

    def build() -> tuple[KnowledgeBase, list[LoadError], CompiledKB]:
        kb, errors = load_knowledge_base(directory)
        return kb, errors, CompiledKB(kb)

    if not directory.is_dir():
        return build()
    matcher_key, model_key = cache_keys(directory)
    kb, errors, index = cached("matcher", matcher_key, build)
    index.model_key = model_key
    return kb, errors, index


def cache_keys(directory: Path) -> tuple[str, str]:
    """The cache keys of the matcher built from ``directory`` and of the ranking model trained on it:
    both hash its files, the loader's and matcher's code and the libraries' versions; the matcher's key
    also where the directory is (its entries record their paths), the model's not."""
    code = hashlib.sha256(f"{CACHE_VERSION} {sys.version} {_versions()}".encode())
    for folder in ("knowledge", "matcher"):
        for source in sorted((_PACKAGE / folder).glob("*.py")):
            code.update(source.name.encode() + b"\0" + source.read_bytes())
    content = tree_hash(directory, [code.digest()])
    return _digest(f"matcher {content} {directory.resolve()}"), _digest(f"model {content}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _versions() -> str:
    """What identifies the installed libraries that compiled or pickled the cached parts (their files'
    size and time), found without importing them: an upgrade changes the key."""
    parts = []
    for name in ("re2", "hyperscan", "yaml", "numpy", "scipy", "sklearn"):
        try:
            spec = importlib.util.find_spec(name)
            st = os.stat(spec.origin) if spec and spec.origin else None
        except (ImportError, ValueError, OSError):
            st = None
        parts.append(f"{name}={st.st_size}:{st.st_mtime_ns}" if st else f"{name}=-")
    return " ".join(parts)
