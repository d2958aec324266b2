"""The ranking model answers with plain numpy arrays exported from what scikit-learn trained: the same
vectors, the same candidates, the same probabilities, and no scikit-learn (or scipy) import to answer."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import MultinomialNB

from tests.conftest import KNOWLEDGE
from tracebot.knowledge.loader import KnowledgeBase
from tracebot.matcher import Matcher
from tracebot.matcher.features import text_info
from tracebot.matcher.model import BAYES_ALPHA, CHAT, candidates, rows
from tracebot.matcher.tfidf import CHAR_NGRAMS, char_grams
from tracebot.matcher.training import fit


@pytest.fixture(scope="module")
def trained(bundled_kb: KnowledgeBase):
    """The scikit-learn objects and the exported model, trained the way the matcher trains it."""
    matcher = Matcher(bundled_kb, model=False)
    t = fit(matcher.index.entries, matcher._evidence_of, text_info)
    entries = matcher.index.entries
    texts = list(dict.fromkeys([*t.parts, *(x for e in entries for x in e.examples_match + e.examples_no_match), *CHAT]))
    return matcher, t.spaces, t.model, t.classifier, texts


def test_character_ngrams_are_scikit_learns_char_wb(trained):
    texts = trained[-1]
    reference = TfidfVectorizer(analyzer="char_wb", ngram_range=CHAR_NGRAMS).build_analyzer()
    for text in texts:
        assert char_grams(text) == reference(text)


def test_exported_vectors_are_scikit_learns(trained):
    _, fitted, model, _, texts = trained
    for space, vectorizer in zip(model.spaces, fitted.vectorizers, strict=True):
        expected = vectorizer.transform(texts).toarray()
        got = np.zeros_like(expected)
        for i, text in enumerate(texts):
            v = space.vocab.vector(text)
            got[i, v.idx] = v.val
        assert np.abs(got - expected).max() < 1e-9


def test_every_kb_text_gets_scikit_learns_candidates_and_probabilities(trained):
    matcher, fitted, model, clf, texts = trained
    for text in texts:
        evidence, prose = matcher._evidence_of(text)
        info = text_info(text, prose)
        sims = [a[0] for a in fitted.signals([text], [info])]
        cands = candidates(sims[0] + sims[1], evidence)
        expected = clf.predict_proba(rows(model, info, evidence, sims, cands))[:, 1]
        got = model.probabilities(text, info, evidence)
        assert list(got) == cands, text
        assert np.abs(np.array(list(got.values())) - expected).max() < 1e-9, text


def test_naive_bayes_is_scikit_learns_multinomial_nb_on_the_entries_texts(trained):
    _, fitted, model, _, texts = trained
    word = fitted.vectorizers[1]
    parts = fitted.parts[1].T.tocsr()  # parts × word features, grouped by entry
    owners = np.repeat(np.arange(len(fitted.starts)), np.diff(np.append(fitted.starts, parts.shape[0])))
    nb = MultinomialNB(alpha=BAYES_ALPHA, fit_prior=False).fit(parts, owners)
    expected = nb.predict_joint_log_proba(word.transform(texts))
    for i, text in enumerate(texts):
        got = model.bayes.log_likelihoods(model.spaces[1].vocab.vector(text))
        assert np.ptp(got - expected[i]) < 1e-6, text  # equal up to a constant per text


def test_answering_from_a_cached_model_imports_neither_scikit_learn_nor_scipy(tmp_path):
    code = f"""
import json, sys
from tracebot.matcher.loading import load_matcher
_, m, _ = load_matcher({str(KNOWLEDGE)!r})
d = m.diagnose("my training job runs out of GPU memory at step 100, how can I fix it?")
print(json.dumps({{"model": m.model is not None, "best": d.best.entry_id if d.best else None,
                  "loaded": sorted(k for k in ("sklearn", "scipy") if k in sys.modules)}}))
"""
    env = {"TRACEBOT_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                                  timeout=600).stdout)
        for _ in range(2)
    ]
    assert runs[0]["model"] and runs[1]["model"]
    assert runs[0]["best"] == runs[1]["best"] is not None
    assert runs[0]["loaded"] == ["scipy", "sklearn"]  # the first run trained
    assert runs[1]["loaded"] == []  # the second answered from the cache
