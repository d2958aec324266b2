"""Cache keys that both the matcher's cache (:mod:`tracebot.matcher.loading`) and the ranking model's
(:mod:`tracebot.matcher.model`) use, computed without importing NumPy or the model."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from tracebot.knowledge.cache import library_versions
from tracebot.knowledge.entry import Entry
from tracebot.knowledge.silence import Silence

_PACKAGE = Path(__file__).resolve().parent.parent  # tracebot/


def model_key(entries: list[Entry], silence: list[Silence] | tuple[Silence, ...] = ()) -> str:
    """The cache key of the ranking model trained on ``entries`` and the ``silence`` texts: their content
    (not where their files are), the matcher's code (it decides the evidence the model was trained on)
    and the versions."""
    h = code_hash(("matcher",), f"{sys.version} {versions()}")
    # repr of the fields (not asdict + JSON, five times slower); where the entry's file lives and its
    # line numbers do not change what the model learns.
    names = [f.name for f in fields(Entry) if f.name not in ("path", "lines")]
    for e in entries:
        h.update(repr([getattr(e, n) for n in names]).encode())
    # what a silence text trains on: its words and its source (a cross-validation leaves it out by source)
    h.update(repr([(s.text, s.url) for s in silence]).encode())
    return h.hexdigest()[:24]


def code_hash(folders: tuple[str, ...], header: str) -> Any:
    """A sha256 of ``header`` and of the sources and data files of tracebot's ``folders`` (a hashlib object)."""
    code = hashlib.sha256(header.encode())
    for folder in folders:
        # its data files too (the matcher's glossary of domain words decides what the word space sees)
        for source in sorted([*(_PACKAGE / folder).glob("*.py"), *(_PACKAGE / folder).glob("*.yaml")]):
            code.update(source.name.encode() + b"\0" + source.read_bytes())
    return code


def versions() -> str:
    """The libraries that compiled or pickled the matcher's and the model's cached parts (see
    :func:`~tracebot.knowledge.cache.library_versions`): an upgrade changes the key."""
    return library_versions(("re2", "hyperscan", "yaml", "numpy", "scipy"))
