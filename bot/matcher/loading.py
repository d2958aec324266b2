"""The one way to read a knowledge directory and build its matcher (CLI, authoring tools, the service).

The built matcher is cached (:mod:`tracebot.knowledge.cache`): the parsed entries, the load errors and
the compiled index (:class:`~tracebot.matcher.index.CompiledKB`, whose Hyperscan database is stored
serialized and whose regexes are compiled again on first use) in one file, under a hash of every file
under the knowledge directory (names and bytes), of the loader's and the matcher's code, and of the
versions of the libraries that compiled it. Any change under ``knowledge/`` or to that code gives a new
key; an unreadable cache file is rebuilt. The trained ranking model is cached by the model itself
(:func:`tracebot.matcher.model.load_or_train`), under :func:`~tracebot.matcher.keys.model_key`: a hash of the entries' content
that does not depend on where the directory is, so copies of one knowledge base share it and an edit
that changes no entry (a comment) keeps it. It is computed when the matcher is built and cached with it,
so a warm start hashes nothing more than the files. :func:`load_matcher` loads (or trains) the model only
when a text first needs it: a long log is answered by the line rules and never waits for training. When
the matcher is not cached, a helper process started before parsing (:mod:`tracebot.matcher.trainer`),
when a core is idle, imports the training code meanwhile and trains the model as soon as the matcher is built.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tracebot.config import DEFAULT_THRESHOLD, MODEL_ENV, env_switch
from tracebot.knowledge.cache import cache_file, cached, tree_hash
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base
from tracebot.matcher import trainer
from tracebot.matcher.keys import code_hash, model_key, versions

if TYPE_CHECKING:
    from tracebot.knowledge.entry import Entry
    from tracebot.matcher.core import Matcher
    from tracebot.matcher.index import CompiledKB
    from tracebot.matcher.model import RankingModel

CACHE_VERSION = 1


def load_matcher(
    directory: Path, threshold: float = DEFAULT_THRESHOLD, *, model: bool | None = None, helper: bool = True
) -> tuple[KnowledgeBase, Matcher, list[LoadError]]:
    """The knowledge base under ``directory``, its matcher, and every problem met while loading it.

    ``model``: use the ranking model (``None``: unless ``$TRACEBOT_MODEL`` is off), made when a text
    first needs it. When the matcher is not cached, a child process imports the training code while this
    one parses and builds, and trains the model then if it is not cached either
    (:mod:`tracebot.matcher.trainer`); ``helper=False`` starts none (the caller knows that no text will
    need the model soon: ``tracebot diagnose`` on a file it will stream)."""
    directory = Path(directory)
    key = matcher_key(directory) if directory.is_dir() else None
    child = None
    if helper and _model_wanted(model) and key is not None:
        child = trainer.start(cache_file("matcher", key))
    try:
        kb, errors, index = load_compiled(
            directory,
            key,
            each=child.entry if child is not None else None,
            parsed=child.hand if child is not None else None,
            built=_handing_ahead(child) if child is not None else None,
        )
        matcher = matcher_of(kb, index, threshold, model=model, helper=child, deferred=True)
    except BaseException:
        if child is not None:
            child.stop()
        raise
    return kb, matcher, errors


def _handing_ahead(child: trainer.Helper) -> Callable[[CompiledKB], None]:
    """``load_compiled``'s ``built`` hook: the helper gathers the training texts' evidence with the matcher just
    built (:meth:`trainer.Helper.ahead`; the matcher is made here, as the trainer never imports the matcher)."""

    def built(index: CompiledKB) -> None:
        from tracebot.matcher.core import Matcher

        child.ahead(lambda: Matcher(index.kb, model=False, index=index))

    return built


def matcher_of(
    kb: KnowledgeBase,
    index: CompiledKB,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    model: bool | None = None,
    helper: trainer.Helper | None = None,
    deferred: bool = False,
) -> Matcher:
    """The matcher over ``index`` (from :func:`load_compiled`), with its ranking model from the model's
    own cache (trained and stored when missing, by ``helper`` when one was started). ``deferred``: the
    model is loaded or trained when a text first needs it (:meth:`Matcher.defer_model`), and ``helper``
    waits until then (it is ended when the matcher is no longer used, or at exit); otherwise now (the
    bot's reload: a paste must never wait for training)."""
    from tracebot.matcher.core import Matcher

    matcher = Matcher(kb, threshold=threshold, model=False, index=index)
    if not (_model_wanted(model) and matcher.can_train):
        if helper is not None:
            helper.stop()
        return matcher
    model_file = cache_file("model", index.model_key) if index.model_key else None

    def make(made_for: Matcher) -> RankingModel:  # handed the matcher: no reference cycle (defer_model)
        try:
            if helper is not None and model_file is not None:
                helper.go(model_file)
                import tracebot.matcher.model  # noqa: F401 — meanwhile, what answering needs (numpy: ~0.1 s)

                helper.evidence(made_for)  # gathered here while the child computes what needs none
                helper.wait()
            return made_for.train_model()
        finally:
            if helper is not None:
                helper.stop()

    if not deferred:
        matcher.model = make(matcher)
        return matcher
    if helper is not None:
        # a matcher that never needed its model (a long log) ends the idle helper when it goes, at the
        # latest when the process exits
        weakref.finalize(matcher, helper.stop)
    matcher.defer_model(make)
    return matcher


def _model_wanted(model: bool | None) -> bool:
    return env_switch(MODEL_ENV, True) if model is None else model


def load_compiled(
    directory: Path,
    key: str | None = None,
    *,
    each: Callable[[Entry], None] | None = None,
    parsed: Callable[[KnowledgeBase, str], None] | None = None,
    built: Callable[[CompiledKB], None] | None = None,
) -> tuple[KnowledgeBase, list[LoadError], CompiledKB]:
    """(knowledge base, load errors, compiled index), from the cache when nothing changed (``key``:
    :func:`matcher_key`, when the caller has it). When it is built, ``each(entry)`` is called with each
    entry as soon as it is parsed (:func:`load_knowledge_base`), ``parsed(kb, model key)`` between
    parsing and building the index (the training helper starts on the entries meanwhile), and
    ``built(index)`` once the index is built, before it is stored (the helper is handed the training
    texts' evidence, and trains while this process stores the matcher)."""
    from tracebot.matcher.index import CompiledKB

    def build() -> tuple[KnowledgeBase, list[LoadError], CompiledKB]:
        kb, errors = load_knowledge_base(directory, whole=False, each=each)  # the matcher's cache file holds it
        mkey = model_key(kb.entries, kb.silence)
        if parsed is not None:
            parsed(kb, mkey)
        index = CompiledKB(kb)
        index.model_key = mkey
        if built is not None:
            built(index)
        return kb, errors, index

    if not directory.is_dir():
        return build()
    return cached("matcher", key or matcher_key(directory), build)


def matcher_key(directory: Path) -> str:
    """The cache key of the matcher built from ``directory``: its files, the code and the versions."""
    code = code_hash(("knowledge", "matcher"), f"{CACHE_VERSION} {sys.version} {directory.resolve()} {versions()}")
    return tree_hash(directory, [code.digest()])
