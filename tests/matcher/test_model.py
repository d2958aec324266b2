"""The ranking model answers with plain numpy arrays exported from what training fitted, and training fits
what scikit-learn fits (the oracle here; training never imports it): the same vectors, the same candidates,
the same probabilities, and no scikit-learn (or scipy) import to answer."""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import MultinomialNB

from tests.conftest import KNOWLEDGE
from tracebot.knowledge.loader import KnowledgeBase
from tracebot.matcher import Matcher, trainer, training
from tracebot.matcher.features import text_info
from tracebot.matcher.loading import load_matcher
from tracebot.matcher.model import BAYES_ALPHA, NB_MARGIN_NATS, POINT_RANGE, _bayes, candidates, rows
from tracebot.matcher.samples import gathered, training_texts
from tracebot.matcher.tfidf import CHAR_NGRAMS, Columns, char_grams, word_grams
from tracebot.matcher.training import fit


@pytest.fixture(scope="module")
def fitted(bundled_kb: KnowledgeBase) -> tuple[Matcher, training.Trained]:
    """The bundled knowledge base's matcher and what trains its model, fitted the way the matcher fits it."""
    matcher = Matcher(bundled_kb, model=False)
    return matcher, fit(matcher.index.entries, matcher.evidence_of, text_info, silence=bundled_kb.silence)


@pytest.fixture(scope="module")
def trained(bundled_kb: KnowledgeBase, fitted):
    """The fitted spaces, the ranking regressions and the exported model, trained the way the matcher trains it."""
    matcher, t = fitted
    entries = matcher.index.entries
    silence = [s.text for s in bundled_kb.silence]
    texts = list(dict.fromkeys([*t.parts, *(x for e in entries for x in e.examples_match + e.examples_no_match), *silence]))
    return matcher, t.spaces, t.model, t.classifier, texts, t.parts


def test_character_ngrams_are_scikit_learns_char_wb(trained):
    texts = trained[4]
    reference = TfidfVectorizer(analyzer="char_wb", ngram_range=CHAR_NGRAMS).build_analyzer()
    for text in texts:
        assert char_grams(text) == reference(text)


def test_exported_vectors_are_scikit_learns(trained):
    _, _, model, _, texts, parts = trained
    # TfidfVectorizer itself, fitted on the same texts (training counts them its own, faster way)
    references = (
        TfidfVectorizer(analyzer=char_grams, sublinear_tf=True),
        TfidfVectorizer(analyzer=word_grams, sublinear_tf=True),
    )
    for space, vectorizer in zip(model.spaces, references, strict=True):
        expected = vectorizer.fit(parts).transform(texts).toarray()
        got = np.zeros_like(expected)
        for i, text in enumerate(texts):
            v = space.vocab.vector(text)
            got[i, v.idx] = v.val
        assert np.abs(got - expected).max() < 1e-9


def test_every_kb_text_gets_training_s_candidates_and_probabilities(trained):
    matcher, fitted, model, clf, texts, _ = trained
    for text in texts:
        evidence, prose = matcher.evidence_of(text)
        info = text_info(text, prose)
        vecs = fitted.vectors([text])
        cent_c, cent_w = (a[0] for a in fitted.similarities(vecs))
        exc = fitted.exceptions([info])[0]
        cands = candidates(cent_c + cent_w, evidence)
        near_c, near_w = (a[0] for a in fitted.nearest([text], vecs, [cands]))
        sims = [cent_c, cent_w, near_c, near_w, exc, fitted.log_likelihoods(vecs[1])[0]]
        expected = clf.probabilities(rows(model, info, evidence, sims, cands))
        got = model.probabilities(text, info, evidence)
        assert list(got) == cands, text
        # the model stores its sparse weights as float32 (products in float64): 1e-7 relative at most
        assert np.abs(np.array(list(got.values())) - expected).max() < 1e-6, text


def test_idf_from_distinct_texts_and_their_copies_is_scikit_learns_on_every_copy():
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfTransformer

    counts = sparse.random(200, 3000, density=0.05, format="csr", random_state=1)
    counts.data = np.ceil(counts.data * 5)
    counts.sort_indices()
    copies = np.random.default_rng(0).integers(1, 20, 200)
    every_copy = counts[np.repeat(np.arange(200), copies)]
    assert np.array_equal(training._idf(counts, copies), TfidfTransformer(sublinear_tf=True).fit(every_copy).idf_)


def test_the_counts_are_scikit_learns_count_vectorizer_s(trained):
    from sklearn.feature_extraction.text import CountVectorizer

    texts, parts = trained[4], trained[5]
    for counts, analyzer in ((training.CharCounts(), char_grams), (training.WordCounts(), word_grams)):
        reference = CountVectorizer(analyzer=analyzer, dtype=np.float64)
        got, expected = counts.fit_transform(parts), reference.fit_transform(parts)
        assert counts.vocabulary_ == reference.vocabulary_
        assert (got != expected).nnz == 0 and got.has_sorted_indices
        got, expected = counts.transform(texts), reference.transform(texts)  # unknown n-grams left out
        assert (got != expected).nnz == 0


def test_tf_idf_weights_are_scikit_learns_to_the_float():
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfTransformer

    rng = np.random.default_rng(3)
    # rows of 0 to 3,000 values: the norms' squares are added one after the other, as scikit-learn adds them
    counts = sparse.random(300, 6000, density=0.1, format="csr", random_state=2)
    counts = sparse.csr_matrix(sparse.diags((rng.random(300) < np.linspace(0, 1, 300)).astype(float)) @ counts)
    counts.eliminate_zeros()
    counts.data = np.ceil(counts.data * 7)
    counts.sort_indices()
    reference = TfidfTransformer(sublinear_tf=True).fit(counts)
    mine = training.Tfidf()
    mine.idf_ = reference.idf_
    got, expected = mine.transform(counts), reference.transform(counts)
    assert np.array_equal(got.indptr, expected.indptr) and np.array_equal(got.indices, expected.indices)
    assert np.array_equal(got.data, expected.data)
    assert np.array_equal(counts.data, np.ceil(counts.data))  # its input untouched


def test_naive_bayes_is_scikit_learns_multinomial_nb_on_the_entries_texts(trained):
    _, fitted, model, _, texts, parts = trained
    word = fitted.vectorizers[1]
    owners = np.repeat(np.arange(fitted.n_entries), np.diff(fitted.starts))  # parts are grouped by entry
    nb = MultinomialNB(alpha=BAYES_ALPHA, fit_prior=False).fit(word.transform(parts), owners)
    expected = nb.predict_joint_log_proba(word.transform(texts))
    for i, text in enumerate(texts):
        got = model.bayes.log_likelihoods(model.spaces[1].vocab.vector(text))
        # equal up to a constant per text, to float32's rounding of the stored weights (about 6e-8 of each),
        # which grows with the log-likelihoods' size: 1.03e-6 on a text near -150 once an example grew
        assert np.ptp(got - expected[i]) < 1e-6 + 1e-8 * np.abs(expected[i]).max(), text


def test_answering_from_a_cached_model_imports_neither_scikit_learn_nor_scipy(tmp_path):
    code = f"""
import json, sys
from tracebot.matcher.loading import load_matcher
_, m, _ = load_matcher({str(KNOWLEDGE)!r})
d = m.diagnose("my training job runs out of GPU memory at step 100, how can I fix it?")
print(json.dumps({{"model": m.model is not None, "best": d.best.entry_id if d.best else None,
                  "loaded": sorted(k for k in ("sklearn", "scipy") if k in sys.modules)}}))
"""
    # trained in this process (no helper process: tests below), so the first run imports them itself
    env = {"TRACEBOT_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), trainer.HELPER_ENV: "0"}
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                                  timeout=600).stdout)
        for _ in range(2)
    ]
    assert runs[0]["model"] and runs[1]["model"]
    assert runs[0]["best"] == runs[1]["best"] is not None
    assert runs[0]["loaded"] == ["scipy"]  # the first run trained, without scikit-learn
    assert runs[1]["loaded"] == []  # the second answered from the cache


def test_a_model_trained_by_the_helper_process_answers_as_one_trained_in_process(tmp_path, monkeypatch):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("trained here, not in the helper"))
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "helper"))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")  # however busy the machine is
    _, by_helper, _ = load_matcher(KNOWLEDGE)
    assert by_helper.model is not None  # the first use has the helper train it
    assert started[0] is not None and started[0].proc.returncode == 0
    # it was handed the entries as they were parsed, the knowledge base's own, before the matcher was built
    assert started[0]._sent == by_helper.index.entries
    monkeypatch.undo()
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "here"))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    _, here, _ = load_matcher(KNOWLEDGE)
    texts = [*(s.text for s in here.kb.silence), *(x for e in here.index.entries for x in e.examples_match[:1])]
    assert [by_helper.diagnose(t).to_dict() for t in texts] == [here.diagnose(t).to_dict() for t in texts]
    # the same model, to the byte: the spaces the helper fitted while the parent built the matcher are
    # the ones the parent would have fitted
    [a], [b] = ((tmp_path / d).glob("model-*.pkl") for d in ("helper", "here"))
    assert a.name == b.name and a.read_bytes() == b.read_bytes()


def test_the_helper_trains_and_stores_the_model_once_the_matcher_is_built_before_a_text_needs_it(tmp_path, monkeypatch):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    gathered_by: list[int] = []
    gather = trainer.Helper._gathered
    monkeypatch.setattr(trainer.Helper, "_gathered", staticmethod(lambda m: gathered_by.append(1) or gather(m)))
    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("trained here, not in the helper"))
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")  # however busy the machine is
    _, m, _ = load_matcher(KNOWLEDGE)
    helper = started[0]
    assert helper is not None
    # no text has asked for the model: the helper was handed the evidence with the built matcher, trained,
    # stored the model and ended by itself, never told to go
    assert helper._ended.wait(120) and helper.proc.returncode == 0 and not helper.going
    assert m.model_pending and len(list(tmp_path.glob("model-*.pkl"))) == 1
    answer = m.diagnose(PASTE).best  # the first paste reads it from the cache
    assert answer is not None and answer.entry_id == "cuda-oom" and answer.probability is not None
    assert gathered_by == [1]  # once, with the built matcher: not again for the paste


def test_waiting_for_a_helper_that_never_ends_gives_up_after_the_timeout_not_twice_it(tmp_path, monkeypatch):
    # a stuck child: the first paste waits TIMEOUT_S for it, then the parent trains (one wait, for the reaper
    # thread's word that the child is done; waiting for the end and then the reaping once took twice as long)
    monkeypatch.setattr(trainer, "TIMEOUT_S", 0.3)
    proc = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    helper = trainer.Helper(proc, tmp_path / "matcher-x.pkl")
    helper.going = True
    waits: list[float | None] = []
    real_wait = helper._done.wait

    def wait(timeout: float | None = None) -> bool:
        waits.append(timeout)
        return real_wait(timeout)

    monkeypatch.setattr(helper._done, "wait", wait)
    try:
        helper.wait()
        assert os.path.exists(f"/proc/{proc.pid}") and proc.returncode is None  # it still runs: the parent trains
        assert waits == [trainer.TIMEOUT_S], waits
    finally:
        helper.stop()
    assert proc.returncode is not None  # stopped and reaped


def test_a_helper_stopped_mid_write_leaves_no_temporary_file_in_the_cache(tmp_path):
    # the helper trains as soon as the matcher is built; a process that never needs the model (a long log) stops
    # it, maybe while it writes the ~100 MB model: what it leaves goes with it, another writer's file stays
    other = tmp_path / ".tmp-1-another-writer"
    other.write_bytes(b"x")
    code = ("import sys, tempfile; from tracebot.knowledge import cache; "
            f"tempfile.mkstemp(dir={str(tmp_path)!r}, prefix=cache._tmp_prefix()); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # noqa: S603
    helper = trainer.Helper(proc, tmp_path / "matcher-x.pkl")
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(f".tmp-{proc.pid}-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # until the child's temporary file exists
    assert list(tmp_path.glob(f".tmp-{proc.pid}-*")), "the child never started writing"
    helper.stop()
    assert proc.returncode is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]


def test_the_parent_goes_on_when_the_helper_closes_its_output_not_when_it_ends(tmp_path):
    # the child closes its standard output once the model is stored and then exits (its memory freed by the
    # kernel, ~0.04 s): the parent's wait ends at the closing; the reaper still reaps the child when it ends
    proc = subprocess.Popen(  # noqa: S603 — closes its output, then hangs until killed
        [sys.executable, "-c", "import os, sys; os.close(1); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    helper = trainer.Helper(proc, tmp_path / "matcher-x.pkl")
    helper.going = True
    try:
        helper.wait()  # (TIMEOUT_S, 120 s, bounds it should the closing go unnoticed)
        assert helper._done.is_set() and proc.poll() is None  # woken while the child still runs
    finally:
        helper.stop()
    assert proc.returncode is not None and helper._ended.is_set()  # then stopped and reaped


def _trained_by_a_child(tmp_path, monkeypatch, told: Callable[[KnowledgeBase, Matcher, str], bytes]) -> tuple[bytes, bytes]:
    """The model a helper process stores when its standard input is ``told(kb, matcher, go_line)`` (the
    bundled knowledge base, the matcher it stored in the child's cache, and the ``go KEY MODEL_KEY`` line
    naming that matcher and its model), and the one trained in this process: (the child's, this process's) model files."""
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "here"))
    load_matcher(KNOWLEDGE)[1].model  # noqa: B018 — trains in this process and stores the model
    cache = tmp_path / "child"
    monkeypatch.setenv("TRACEBOT_CACHE", str(cache))
    kb, matcher, _ = load_matcher(KNOWLEDGE, model=False)  # stores the matcher only
    [matcher_file] = cache.glob("matcher-*.pkl")
    import threading

    with (tmp_path / "stderr").open("w+b") as err:
        proc = subprocess.Popen(  # noqa: S603 — our own module, argv list
            [sys.executable, "-I", "-m", "tracebot.matcher.train_child"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
            env={**os.environ, "TRACEBOT_CACHE": str(cache)},
        )
        data = told(kb, matcher, f"go {matcher_file.stem.partition('-')[2]} {matcher.index.model_key}\n")
        # written by a thread: the child reads the evidence only when its rows need it (a pipe holds 64 KB)
        threading.Thread(target=lambda: (proc.stdin.write(data), proc.stdin.close()), daemon=True).start()
        try:
            assert proc.stdout.read() == b""  # it writes nothing, and closes its output when it is done...
            stored = list(cache.glob("model-*.pkl"))  # ...with the model stored, what its parent goes on from
            assert proc.wait(300) == 0, err.seek(0) or err.read().decode()
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
    [a], [b] = (d.glob("model-*.pkl") for d in (cache, tmp_path / "here"))
    assert stored == [a]
    assert a.name == b.name
    return a.read_bytes(), b.read_bytes()


def _trained_by_a_child_handed(
    tmp_path, monkeypatch, handed_key: str | None, entries: slice, silence: bool = True
) -> tuple[bytes, bytes]:
    """:func:`_trained_by_a_child` handed ``entries`` of the bundled knowledge base (and its silence texts,
    or none) under ``handed_key`` (``None``: the model key of the matcher it is then told to train for)."""

    def told(kb: KnowledgeBase, matcher: Matcher, go: str) -> bytes:
        handed = pickle.dumps(
            (handed_key or matcher.index.model_key, kb.entries[entries], kb.silence if silence else []))
        return b"kb %d\n" % len(handed) + handed + go.encode()

    return _trained_by_a_child(tmp_path, monkeypatch, told)


@pytest.mark.parametrize("silence", [True, False])
def test_a_helper_handed_the_entries_a_few_at_a_time_trains_on_them(tmp_path, monkeypatch, silence):
    # the parent hands the entries over as it parses, then says how many there were: the child trains on what
    # it prepared from them (here, handed without the silence texts, a model that differs: it was used), and
    # with the silence texts that is the model trained in one process

    def told(kb: KnowledgeBase, matcher: Matcher, go: str) -> bytes:
        batches = [pickle.dumps(kb.entries[i : i + 7]) for i in range(0, len(kb.entries), 7)]
        handed = pickle.dumps((matcher.index.model_key, len(kb.entries), kb.silence if silence else []))
        return b"".join(b"entries %d\n" % len(b) + b for b in batches) + b"kb %d\n" % len(handed) + handed + go.encode()

    child, here = _trained_by_a_child(tmp_path, monkeypatch, told)
    assert (child == here) is silence


def test_a_helper_handed_fewer_entries_than_its_parent_says_trains_on_the_matchers(tmp_path, monkeypatch):
    # a batch lost on the way (the count the parent gives is not what came): what was prepared is not used,
    # the child trains on the matcher's entries, as the parent would have (even handed no silence texts)

    def told(kb: KnowledgeBase, matcher: Matcher, go: str) -> bytes:
        batch = pickle.dumps(kb.entries[:-1])
        handed = pickle.dumps((matcher.index.model_key, len(kb.entries), []))
        return b"entries %d\n" % len(batch) + batch + b"kb %d\n" % len(handed) + handed + go.encode()

    child, here = _trained_by_a_child(tmp_path, monkeypatch, told)
    assert child == here


def test_what_is_done_with_each_entry_as_it_comes_is_what_preparing_them_all_does(monkeypatch):
    # the helper adds each entry as it is handed over (its words, its parts' n-grams); preparing then fits
    # the same spaces and model as preparing from the entries alone, using what was added; for other
    # entries, or texts left out, what was added is not used
    from tracebot.matcher.loading import load_compiled

    kb, _, _ = load_compiled(KNOWLEDGE)
    whole = training.prepare(kb.entries, silence=kb.silence, rows_begun=True)
    streamed = training.Streamed()
    for i in range(0, len(kb.entries), 10):
        streamed.add(kb.entries[i : i + 10])
    monkeypatch.setattr(training, "_words", lambda e: pytest.fail("an entry's words computed again"))
    monkeypatch.setattr(training.CharCounts, "add", lambda self, texts: list(texts) and pytest.fail("a part analysed again"))
    fitted = training.prepare(streamed.entries, silence=kb.silence, rows_begun=True, streamed=streamed)
    assert pickle.dumps(fitted.model) == pickle.dumps(whole.model)
    assert np.array_equal(fitted.unaided.cent_c, whole.unaided.cent_c)
    monkeypatch.undo()
    hidden = [next(x for e in kb.entries for x in e.examples_match)]
    streamed = training.Streamed()
    streamed.add(kb.entries)
    left_out = training.prepare(streamed.entries, leave_out_examples=hidden, streamed=streamed)
    assert pickle.dumps(left_out.model) == pickle.dumps(training.prepare(kb.entries, leave_out_examples=hidden).model)
    fewer = training.prepare(kb.entries[:-1], streamed=streamed)
    assert pickle.dumps(fewer.model) == pickle.dumps(training.prepare(kb.entries[:-1]).model)


def test_a_helper_handed_other_entries_than_the_matchers_trains_on_the_matchers(tmp_path, monkeypatch):
    # what the child prepared serves only the model key it was handed with; the matcher it is told to
    # train for is what counts (here: handed the first ten entries under another key)
    child, here = _trained_by_a_child_handed(tmp_path, monkeypatch, "f" * 24, slice(10))
    assert child == here


def test_a_helper_trains_from_what_it_prepared_when_handed_the_matchers_model_key(tmp_path, monkeypatch):
    # the head start is used, not only handed: under the matcher's own model key the child trains from
    # the texts and spaces it prepared from what it was handed (here without the silence texts, so the
    # model differs)
    child, here = _trained_by_a_child_handed(tmp_path, monkeypatch, None, slice(None), silence=False)
    assert child != here


@pytest.mark.parametrize(("head_start", "ahead"), [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("handed", ["gathered", "torn", "blanked"])
def test_the_helper_trains_on_the_evidence_its_parent_hands_it(tmp_path, monkeypatch, handed, head_start, ahead):
    # the parent gathers the training texts' evidence with the matcher it built, while the child computes
    # the rest; what the parent gathered gives the model trained in one process, a torn handover makes the
    # child gather it itself (loading the matcher then, when it had the entries beforehand), and other
    # evidence (every text's emptied) is what the child trains on. ``ahead``: handed over before "go" (the
    # child trains at once; torn, it waits for "go" and gathers it with the matcher)

    def told(kb: KnowledgeBase, matcher: Matcher, go: str) -> bytes:
        evidence = gathered(training_texts(matcher.index.entries, (), (), (), kb.silence)[0], matcher.evidence_of)
        if handed == "blanked":
            evidence = {k: ({}, prose) for k, (_, prose) in evidence.items()}
        data = pickle.dumps(evidence)
        if handed == "torn":
            data = data[: len(data) // 2]
        entries = pickle.dumps((matcher.index.model_key, kb.entries, kb.silence))
        evidence = b"evidence %d\n" % len(data) + data
        kb_told = b"kb %d\n" % len(entries) + entries if head_start else b""
        return kb_told + (evidence + go.encode() if ahead else go.encode() + evidence)

    child, here = _trained_by_a_child(tmp_path, monkeypatch, told)
    assert (child == here) is (handed != "blanked")


def test_a_helper_with_a_head_start_and_the_whole_evidence_trains_without_reading_the_matcher(tmp_path, monkeypatch):
    # handed the entries (under the matcher's model key) and every training text's evidence, the child needs
    # nothing from the matcher's cache file (loading it was on the cold start's critical path): here it is
    # gone before the child is told to go, and the model is still the one trained in one process

    def told(kb: KnowledgeBase, matcher: Matcher, go: str) -> bytes:
        for f in (tmp_path / "child").glob("matcher-*.pkl"):
            f.unlink()
        evidence = pickle.dumps(gathered(training_texts(matcher.index.entries, (), (), (), kb.silence)[0], matcher.evidence_of))
        entries = pickle.dumps((matcher.index.model_key, kb.entries, kb.silence))
        return b"kb %d\n" % len(entries) + entries + go.encode() + b"evidence %d\n" % len(evidence) + evidence

    child, here = _trained_by_a_child(tmp_path, monkeypatch, told)
    assert child == here


def test_a_helper_missing_a_texts_evidence_whose_matcher_is_gone_stores_nothing(tmp_path, monkeypatch):
    # the matcher is loaded only for a text the parent handed no evidence for; gone by then (pruned), the
    # child ends quietly, storing nothing, and the parent trains
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACEBOT_CACHE", str(cache))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    kb, matcher, _ = load_matcher(KNOWLEDGE, model=False)
    [matcher_file] = cache.glob("matcher-*.pkl")
    matcher_file.unlink()
    entries = pickle.dumps((matcher.index.model_key, kb.entries, kb.silence))
    evidence = pickle.dumps({})  # no text's
    told = (b"kb %d\n" % len(entries) + entries + f"go {matcher_file.stem.partition('-')[2]} {matcher.index.model_key}\n".encode()
            + b"evidence %d\n" % len(evidence) + evidence)
    done = subprocess.run(  # noqa: S603 — our own module, argv list
        [sys.executable, "-I", "-m", "tracebot.matcher.train_child"],
        input=told, env={**os.environ, "TRACEBOT_CACHE": str(cache)}, capture_output=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    # no model, no temporary file (the knowledge files' digests, tree_hash's, are the matcher key's; a table of
    # tracebot's own, cached_yaml's, is whoever read it first's)
    assert sorted(p.name.partition("-")[0] for p in cache.iterdir() if not p.name.startswith(("digests-", "table-"))) == ["files"]


def test_the_helper_runs_with_its_memory_settings_unless_the_caller_chose_its_own(tmp_path, monkeypatch):
    # the child fits its spaces without NumPy's huge-page advice (the kernel's compaction stalled it for up to
    # 0.4 s) and with glibc keeping freed memory in its heap; a setting the operator made in the environment wins
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "12345")
    child = trainer.start(tmp_path / "cache" / "matcher-0.pkl")
    assert child is not None
    try:
        told = dict(
            v.split(b"=", 1) for v in (Path("/proc") / str(child.proc.pid) / "environ").read_bytes().split(b"\0") if v
        )
    finally:
        child.stop()
    assert told[b"NUMPY_MADVISE_HUGEPAGE"] == b"0"
    assert told[b"MALLOC_MMAP_THRESHOLD_"] == trainer.MEMORY_ENV["MALLOC_MMAP_THRESHOLD_"].encode()
    assert told[b"MALLOC_TRIM_THRESHOLD_"] == b"12345"
    assert told[b"TRACEBOT_TRAIN_HELPER"] == b"0"


def test_the_helper_takes_the_entries_as_they_come_and_touches_memory_only_while_none_waits():
    # the parent hands the entries over a few at a time while it parses; the child adds each message's as it
    # comes, and only while nothing waits in the pipe maps its fit's memory ahead, a step at a time, up to its
    # budget; it stops at the first other message (the parsed knowledge base's)
    from tracebot.matcher.train_child import Pipe, Prefault, take_entries

    read, write = os.pipe()
    message = lambda batch: b"entries %d\n" % len(pickle.dumps(batch)) + pickle.dumps(batch)  # noqa: E731
    added: list[int] = []

    class Spent(Prefault):  # the parent writes the rest once the budget is spent
        def step(self) -> bool:
            if super().step():
                return True
            os.write(write, message([3]) + b"kb 9\n")
            return False

    try:
        os.write(write, message([1, 2]))  # waiting already: read before any memory is touched
        memory = Spent(budget=3 << 20, step=1 << 20)
        steps = []
        memory.step = lambda s=memory.step: steps.append(len(added)) or s()  # type: ignore[method-assign]
        told = take_entries(Pipe(read), type("Streamed", (), {"add": staticmethod(added.extend)}), memory)
        assert told == [b"kb", b"9"] and added == [1, 2, 3]
        assert memory.touched == 3 << 20 and memory.block is None  # touched, then freed for the fit
        assert set(steps) == {2}  # only after the first message was taken

        os.write(write, message([4]) + b"kb 1\n")  # everything waiting: nothing touched
        memory = Prefault(budget=3 << 20, step=1 << 20)
        assert take_entries(Pipe(read), type("Streamed", (), {"add": staticmethod(added.extend)}), memory) == [b"kb", b"1"]
        assert added[-1] == 4 and memory.touched == 0
    finally:
        os.close(read)
        os.close(write)


def test_when_the_helper_process_fails_the_parent_trains_the_model_itself(tmp_path, monkeypatch):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the helper dies at once
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    _, m, _ = load_matcher(KNOWLEDGE)
    assert m.model is not None
    assert started[0] is not None and started[0].proc.returncode not in (None, 0)
    assert m.diagnose("my training job runs out of GPU memory at step 100, how can I fix it?").best is not None


LONG_LOG = "\n".join(
    [*(f"[rank{r % 8}]: iteration {r} | loss 1.{r:04d}" for r in range(300)),
     "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
)
PASTE = "my training job runs out of GPU memory at step 100, how can I fix it?"


@pytest.mark.parametrize("helper", ["0", "1"])
def test_a_long_log_is_answered_without_training_the_model(tmp_path, monkeypatch, helper):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, helper)
    _, m, _ = load_matcher(KNOWLEDGE)
    d = m.diagnose(LONG_LOG)  # 301 lines: the line rules answer, the model is never read
    assert d.best is not None and d.best.entry_id == "cuda-oom" and d.best.probability is None
    assert m.model_pending  # neither loaded nor waited for
    if helper == "0":  # (a helper trains it on the other core as soon as the matcher is built)
        assert not list(tmp_path.glob("model-*.pkl"))
    # the first paste makes it (trained now, stored in the cache) and is ranked by it
    assert m.diagnose(PASTE).best.probability is not None
    assert not m.model_pending and len(list(tmp_path.glob("model-*.pkl"))) == 1


def test_a_deferred_model_that_fails_to_train_fails_every_paste_not_only_the_first(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    _, m, _ = load_matcher(KNOWLEDGE)

    def broken(*_a, **_k):
        raise RuntimeError("training broke")

    monkeypatch.setattr(training, "train", broken)
    for _ in range(2):  # never a quiet fall back to answers without the model
        with pytest.raises(RuntimeError, match="training broke"):
            m.diagnose(PASTE)
    assert m.diagnose(LONG_LOG).best.entry_id == "cuda-oom"  # the line rules need no model
    monkeypatch.undo()
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    assert m.diagnose(PASTE).best.probability is not None and not m.model_pending


def test_threads_that_need_a_deferred_model_at_once_train_it_once_and_share_it(tmp_path, monkeypatch):
    # the Bolt worker threads of anything serving a load_matcher matcher: one trains, the others wait
    import threading

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    _, m, _ = load_matcher(KNOWLEDGE)
    real, calls, training_now, second_waits = training.train, [], threading.Event(), threading.Event()

    def slow(*a, **k):
        calls.append(1)
        training_now.set()
        assert second_waits.wait(60)  # the second thread is at the lock while this one trains
        return real(*a, **k)

    class Watched:  # the matcher's lock, telling when the second thread comes to it
        def __init__(self, lock):
            self.lock = lock

        def __enter__(self):
            if training_now.is_set():
                second_waits.set()
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    monkeypatch.setattr(training, "train", slow)
    m._model_lock = Watched(m._model_lock)
    got: list[object] = []
    first = threading.Thread(target=lambda: got.append(m.model))
    first.start()
    assert training_now.wait(60)
    second = threading.Thread(target=lambda: got.append(m.model))
    second.start()
    first.join(120)
    second.join(120)
    assert len(calls) == 1 and len(got) == 2 and got[0] is got[1] is not None


def test_tracebot_trace_has_the_model_before_a_plugin_runs(tmp_path, monkeypatch):
    # a plugin's match() runs inside its deadline: training there (seconds cold, up to the helper's
    # timeout) could time the whole trace out and lose what the plugin found
    from tracebot.cli import _trace_knowledge
    from tracebot.config import Config

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    config = Config.from_env({"TRACEBOT_KNOWLEDGE": str(KNOWLEDGE)})
    knowledge, note = _trace_knowledge(config)
    assert note is None and knowledge is not None and not knowledge.matcher.model_pending
    assert knowledge.matcher.model is not None
    # a model that fails to train is said before the plugins run, as a broken knowledge base is
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "empty"))
    monkeypatch.setattr(training, "train", lambda *_a, **_k: (_ for _ in ()).throw(MemoryError("no room to train")))
    knowledge, note = _trace_knowledge(config)
    assert knowledge is None and "the ranking model could not be trained (MemoryError: no room to train)" in note


def test_the_cli_explains_a_model_that_failed_to_train_instead_of_a_traceback(tmp_path, monkeypatch, capsys):
    from tracebot.cli import main

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trainer.HELPER_ENV, "0")
    monkeypatch.setattr(training, "train", lambda *_a, **_k: (_ for _ in ()).throw(MemoryError("no room to train")))
    paste, cases = tmp_path / "paste.txt", tmp_path / "cases.jsonl"
    paste.write_text(PASTE)
    cases.write_text(json.dumps({"id": "a", "text": PASTE}) + "\n")
    for argv in (["diagnose", str(paste)], ["diagnose", "--batch", str(cases)]):
        assert main([*argv[:1], "--knowledge", str(KNOWLEDGE), *argv[1:]]) == 1
        err = capsys.readouterr().err
        assert "the ranking model could not be trained (MemoryError: no room to train)" in err
        assert "TRACEBOT_MODEL=0" in err  # what the user can do meanwhile


def test_the_idle_helper_process_ends_with_the_matcher_that_never_needed_it(tmp_path, monkeypatch):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    _, m, _ = load_matcher(KNOWLEDGE)
    m.diagnose(LONG_LOG)
    proc = started[0].proc
    gc.disable()  # ended when the last reference goes, not at some later collection: a process that
    try:  # loads matchers again and again (the test suite, a tool) must not gather idle helpers
        del m
        assert proc.returncode is not None  # killed and reaped, not left waiting for a "go"
    finally:
        gc.enable()
    assert not list(tmp_path.glob("model-*.pkl"))


def test_tracebot_diagnose_starts_no_helper_for_a_file_it_will_stream(tmp_path, monkeypatch):
    from tracebot.cli import main
    from tracebot.matcher.core import FULL_SCAN_CHARS

    started: list[object] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")  # however busy the machine is
    big, small = tmp_path / "big.log", tmp_path / "small.log"
    big.write_text("\n".join([f"[rank1]: step {i} | loss 1.0" for i in range(FULL_SCAN_CHARS // 20)] + [LONG_LOG]))
    small.write_text(LONG_LOG)
    assert main(["diagnose", "--knowledge", str(KNOWLEDGE), str(big)]) == 0
    assert started == []  # streamed: the line rules answer, no model will be read
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "empty"))  # nothing cached again
    assert main(["diagnose", "--knowledge", str(KNOWLEDGE), str(small)]) == 0
    assert len(started) == 1 and started[0] is not None  # a file held in memory may need the model
    started[0].stop()  # (its matcher, never needing it, would end it when collected)


@pytest.mark.parametrize("argv", [["list"], ["show", "cuda-oom"], ["search", "out", "of", "memory"]])
def test_kb_commands_that_answer_no_text_start_no_helper(tmp_path, monkeypatch, argv):
    # they never read the model: a helper would import scikit-learn on the other core for nothing
    from tracebot.cli import main

    started: list[object] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")  # however busy the machine is
    assert main(["kb", argv[0], "--knowledge", str(KNOWLEDGE), *argv[1:]]) == 0
    assert started == []


def test_tracebot_diagnose_on_a_long_log_with_nothing_cached_trains_no_model(tmp_path):
    log = tmp_path / "big.log"
    log.write_text(LONG_LOG)
    env = dict(os.environ, TRACEBOT_CACHE=str(tmp_path / "cache"), **{trainer.HELPER_ENV: "1"})
    out = subprocess.run([sys.executable, "-m", "tracebot.cli", "diagnose", "--json", "--knowledge", str(KNOWLEDGE), str(log)],
                         env=env, capture_output=True, text=True, check=True, timeout=600)
    assert json.loads(out.stdout)["matches"][0]["entry_id"] == "cuda-oom"
    assert list((tmp_path / "cache").glob("matcher-*.pkl")) and not list((tmp_path / "cache").glob("model-*.pkl"))


def test_the_helper_process_never_imports_a_package_planted_in_the_working_directory(tmp_path, monkeypatch):
    # a local user leaves tracebot/ in /tmp (or a job's directory) and waits for tracebot to start there
    planted = tmp_path / "cwd" / "tracebot"
    planted.mkdir(parents=True)
    ran = tmp_path / "ran"
    (planted / "__init__.py").write_text(f"open({str(ran)!r}, 'w').write('planted code ran')\n")
    (planted / "matcher").mkdir()
    (planted / "matcher" / "__init__.py").write_text("")
    (planted / "matcher" / "train_child.py").write_text(f"open({str(ran)!r}, 'w').write('planted child ran')\n")
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "cwd"))  # ignored by the helper too
    monkeypatch.chdir(tmp_path / "cwd")
    _, m, _ = load_matcher(KNOWLEDGE)
    assert m.model is not None
    assert started[0] is not None and started[0].proc.returncode == 0  # the helper trained
    assert not ran.exists(), ran.read_text()


def test_centroids_with_common_ngrams_kept_dense_are_the_sparse_ones(trained):
    _, fitted, model, _, texts, _ = trained
    sums = fitted.sums[0].T.tocsr()  # features × entries, as scipy summed them
    sums.sort_indices()
    sparse_only = Columns(sums.indptr, sums.indices, sums.data.astype(np.float32), sums.shape[1])  # stored as float32
    mixed = model.spaces[0].sums
    assert mixed.dense is not None and 0 < len(mixed.dense) < len(mixed.indptr) - 1  # both kinds of rows
    for text in texts:
        v = model.spaces[0].vocab.vector(text)
        assert np.abs(mixed.dot(v) - sparse_only.dot(v)).max() < 1e-12, text


def test_runs_of_rows_dot_products_are_each_rows_own_sum_of_products_to_the_float(fitted):
    # what training's closest parts and a paste's (Space.nearest) read: runs of rows (an entry's parts) at
    # once, each row's products added first to last as np.add.reduceat adds one row alone, empty rows 0
    from scipy import sparse

    rng = np.random.default_rng(11)
    m = sparse.random(60, 400, density=0.05, format="csr", random_state=11, dtype=np.float64).tolil()
    m[[3, 4, 30, 59], :] = 0  # empty rows: inside a run, at a run's end, the last row
    m = m.tocsr()
    m.sort_indices()
    cols = Columns(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data.astype(np.float32), m.shape[1])
    dense = rng.random(m.shape[1])
    first, count = np.array([40, 2, 30, 58, 10]), np.array([5, 3, 1, 2, 0])  # in any order, one of none

    def alone(r: int) -> float:
        lo, hi = cols.indptr[r], cols.indptr[r + 1]
        return float(np.add.reduceat(cols.data[lo:hi] * dense[cols.indices[lo:hi]], [0])[0]) if hi > lo else 0.0

    got = cols.run_dots(first, count, dense)
    rows = [r for f, c in zip(first, count, strict=True) for r in range(f, f + c)]
    assert got.tolist() == [alone(r) for r in rows]
    assert np.allclose(got, m[rows] @ dense, rtol=1e-6)  # the dot products (the values are stored as float32)
    assert cols.run_dots(np.array([3, 59]), np.array([2, 1]), dense).tolist() == [0.0, 0.0, 0.0]
    assert cols.run_dots(np.array([], dtype=np.int64), np.array([], dtype=np.int64), dense).tolist() == []


def test_the_helper_told_a_key_whose_matcher_is_gone_builds_and_stores_nothing(tmp_path, monkeypatch):
    # the parent names the matcher it stored; if that file is gone (pruned) and the directory has changed
    # since, building it again would store the new files' matcher under the old files' key
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "TRACEBOT_CACHE": str(cache), trainer.HELPER_ENV: "0"}
    done = subprocess.run(  # noqa: S603 — our own module, argv list
        [sys.executable, "-I", "-m", "tracebot.matcher.train_child"],
        input=b"go 0123456789abcdef01234567 89abcdef0123456789abcdef\n", env=env, capture_output=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert sorted(p.name for p in cache.iterdir()) == []


def test_the_broad_hung_job_entry_is_among_the_hubbiest_of_the_bundled_knowledge_base(trained):
    # distributed-hang-py-spy (hung multi-GPU jobs in general, 20 examples) is the entry real prose about
    # other problems most often got first: its word-space hubness is near the top, where the model reads it
    matcher, _, model, *_ = trained
    ids = [e.id for e in matcher.index.entries]
    word = model.hubness[1]
    assert model.hubness.shape == (2, len(ids))
    assert ids.index("distributed-hang-py-spy") in np.argsort(-word)[:3]


@pytest.mark.parametrize("ended", ["input closed", "stopped"])
def test_a_helper_told_to_go_after_its_input_was_closed_is_not_waited_for(tmp_path, monkeypatch, ended):
    # a model asked for again once the helper's input is closed (a first training that failed, then another
    # paste): "go" is not queued behind the end of the input, where nothing would ever write it, and nothing
    # waits for it (the parent trains at once)
    import time

    monkeypatch.setattr(trainer, "TIMEOUT_S", 5.0)
    proc = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(60)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    (tmp_path / "matcher-x.pkl").write_bytes(b"")
    helper = trainer.Helper(proc, tmp_path / "matcher-x.pkl")
    try:
        helper.evidence(None)  # type: ignore[arg-type] — not going: only closes the input
        if ended == "stopped":
            helper.stop()
        began = time.monotonic()
        helper.go(tmp_path / "model-y.pkl")
        helper.wait()
        assert not helper.going and time.monotonic() - began < 1.0
    finally:
        helper.stop()
        proc.stdout.close()


def test_a_helper_that_never_reads_its_evidence_cannot_block_the_parent(tmp_path, monkeypatch):
    # the parent hands the evidence over after "go"; a child hung before reading it (the pipe holds 64 KB)
    # must leave the parent to wait() with its deadline and then train, not block it in the write forever
    import threading

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    _, matcher, _ = load_matcher(KNOWLEDGE, model=False)
    hung = subprocess.Popen(  # noqa: S603 — reads nothing, ends only when killed
        [sys.executable, "-c", "import time; time.sleep(600)"], stdin=subprocess.PIPE
    )
    helper = trainer.Helper(hung, tmp_path / "matcher-x.pkl")
    helper.going = True
    monkeypatch.setattr(trainer, "TIMEOUT_S", 0.5)
    try:
        handed = threading.Thread(target=lambda: (helper.evidence(matcher), helper.wait()), daemon=True)
        handed.start()
        handed.join(60)
        assert not handed.is_alive(), "the parent is blocked writing to a child that never reads"
        assert hung.poll() is None  # returned while the child still hangs
    finally:
        helper.stop()
    assert hung.returncode is not None and not helper._writer.is_alive()


@pytest.mark.parametrize(("precision", "bound"), [(1.0, POINT_RANGE[1]), (0.0, POINT_RANGE[0])], ids=["ceiling", "floor"])
def test_a_calibration_asking_for_a_point_outside_the_range_gets_the_range_s_bound(fitted, monkeypatch, precision, bound):
    # every first answer right (precision 1.0) asks for a point at the top of the out-of-fold probabilities,
    # any (0.0) for the lowest of them: the point that maps to the threshold is the ceiling, the floor
    t = fitted[1]
    monkeypatch.setattr(training, "TARGET_PRECISION", precision)
    point, _, report = training._calibrate(t.samples, t.xs, t.ys)
    asked = report["p_confident"]
    assert asked > POINT_RANGE[1] if bound == POINT_RANGE[1] else asked < POINT_RANGE[0], asked  # outside the range
    assert point == bound


def _scipy_row_sq_norms(m) -> np.ndarray:
    return np.asarray(m.multiply(m).sum(axis=1)).ravel()


def test_row_square_norms_are_scipys_floats(fitted):
    from scipy import sparse

    rng = np.random.default_rng(7)
    many = sparse.random(40, 30_000, density=0.002, format="csr", random_state=7).tolil()
    many[5, :] = rng.random(30_000)  # a row with many values
    many[9, :] = many[20, :] = 0  # and empty rows, among them the last
    many[39, :] = 0
    many = many.tocsr()
    assert (np.diff(many.indptr) == 0).sum() == 3 and np.diff(many.indptr).max() == 30_000
    empty = sparse.csr_matrix((3, 10))
    for m in (*fitted[1].spaces.sums, many, empty):  # the entries' summed vectors training reads it for
        assert np.array_equal(training._row_sq_norms(m), _scipy_row_sq_norms(m))


def test_row_square_norms_of_a_matrix_with_repeated_or_unsorted_columns_are_scipys():
    # scipy adds a column's repeated values before squaring them; a row's columns in any order sum the same
    from scipy import sparse

    repeated = sparse.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 3, 3])), shape=(2, 3))
    rng = np.random.default_rng(3)
    unsorted = sparse.random(20, 500, density=0.1, format="csr", random_state=3)
    for i in range(unsorted.shape[0]):
        s, e = unsorted.indptr[i], unsorted.indptr[i + 1]
        order = rng.permutation(e - s)
        unsorted.indices[s:e], unsorted.data[s:e] = unsorted.indices[s:e][order], unsorted.data[s:e][order]
    unsorted.has_sorted_indices = False
    for m in (repeated, unsorted):
        assert np.allclose(training._row_sq_norms(m), _scipy_row_sq_norms(m), rtol=1e-12, atol=0)
    assert not repeated.has_canonical_format  # (the caller's matrix is left as it was)


def _gone(pid: int, within_s: float = 60.0) -> bool:
    """Whether process ``pid`` is gone, reaped (a zombie keeps its /proc entry until its parent waits for it),
    by ``within_s``: the state is polled, the bound only ends a test that would otherwise never end."""
    import time

    deadline = time.monotonic() + within_s
    while os.path.exists(f"/proc/{pid}"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_an_idle_helper_that_dies_on_its_own_is_reaped_at_once_not_left_a_zombie(tmp_path, monkeypatch):
    import signal

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    helper = trainer.start(tmp_path / "matcher-0123456789abcdef01234567.pkl")
    assert helper is not None
    try:
        os.kill(helper.proc.pid, signal.SIGKILL)  # the OOM killer, say, while it waits for a "go"
        assert _gone(helper.proc.pid), "a zombie until its matcher goes or the CLI exits"
        assert helper.proc.returncode == -signal.SIGKILL
    finally:
        helper.stop()


def test_an_idle_helper_never_told_to_go_ends_by_itself_and_the_parent_trains_when_a_text_needs_the_model(
    tmp_path, monkeypatch
):
    started: list[trainer.Helper | None] = []
    start = trainer.start
    monkeypatch.setattr(trainer, "start", lambda *a: started.append(start(*a)) or started[-1])
    monkeypatch.setattr(trainer, "IDLE_S", 1.0)
    monkeypatch.setattr(trainer.Helper, "ahead", lambda *a: None)  # no evidence ahead: it waits for "go"
    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path))
    monkeypatch.setenv(trainer.HELPER_ENV, "1")
    _, m, _ = load_matcher(KNOWLEDGE)
    m.diagnose(LONG_LOG)  # answered by the line rules: the model is not needed yet
    helper = started[0]
    assert helper is not None and not helper.going
    # its prepared spaces go with it: it ends (and is reaped) with the matcher still in use
    assert _gone(helper.proc.pid) and helper.proc.returncode == 0
    answer = m.diagnose("my training job runs out of GPU memory at step 100, how can I fix it?").best
    assert answer is not None and answer.entry_id == "cuda-oom" and answer.probability is not None
    assert list(tmp_path.glob("model-*.pkl"))  # trained (here) and stored


def test_the_cold_start_profile_stores_the_model_training_stores(tmp_path, monkeypatch, capsys):
    # bench/profile_cold_start.py calls training's steps one by one to time them: its model must be the one
    # training makes (it kept the statement point's old name, so its model had no statements: never confident
    # on a stated problem)
    from bench import profile_cold_start
    from tracebot.knowledge.cache import lookup
    from tracebot.matcher.loading import load_compiled

    monkeypatch.setenv("TRACEBOT_CACHE", str(tmp_path / "cache"))
    profile_cold_start.run(KNOWLEDGE, "CUDA out of memory", profile_cold_start.Clock())
    assert json.loads(capsys.readouterr().out)["bench"] == "profile_cold_start"
    kb, _, index = load_compiled(KNOWLEDGE)
    profiled = lookup("model", index.model_key)
    matcher = Matcher(kb, index=index, model=False)
    trained = training.train(matcher.index.entries, matcher.evidence_of, text_info, silence=kb.silence)
    assert profiled is not None
    assert (len(profiled.statements), profiled.report) == (len(trained.statements), trained.report)
    assert len(trained.statements) and not hasattr(profiled, "p_statement")


def test_the_train_helper_switch_reads_the_usual_on_off_words_and_refuses_any_other(tmp_path, monkeypatch):
    """TRACEBOT_TRAIN_HELPER read only "0" and "1": "off" and "no" still started a helper on a free core,
    "on" and "yes" did not force one on a busy machine, and a typo said nothing. It is read as every other
    switch is (config.env_switch), with the same one-line refusal, at start and where it acts."""
    from tracebot.config import Config

    spawned: list[list[str]] = []

    def popen(argv, **_kw):
        spawned.append(argv)
        raise OSError("not started in this test")

    monkeypatch.setattr(subprocess, "Popen", popen)
    cold = tmp_path / "matcher.pkl"  # not there yet: a cold start, where a helper could help
    for word, free, started in (("off", True, False), ("No", True, False), ("on", False, True),
                                (" yes ", False, True), ("", True, True), ("", False, False)):
        monkeypatch.setenv(trainer.HELPER_ENV, word)
        monkeypatch.setattr(trainer, "core_free", lambda free=free: free)
        spawned.clear()
        assert trainer.start(cold) is None
        assert bool(spawned) is started, (word, free)
    monkeypatch.setenv(trainer.HELPER_ENV, "always")
    said = r"TRACEBOT_TRAIN_HELPER must be on or off \(also true/false, yes/no, 1/0\), got 'always'"
    with pytest.raises(ValueError, match=said):
        trainer.start(cold)
    with pytest.raises(ValueError, match=said):
        Config.from_env({trainer.HELPER_ENV: "always"})


def test_a_narrow_naive_bayes_lead_is_read_as_narrow():
    # naive Bayes' first choice 2 nats ahead of the next was right about three times in five on the development
    # sets, 8 or more nats ahead nearly always: the ranking model reads how far ahead, not only who leads
    top, margin = _bayes(np.array([0.0, -2.0, -20.0]), np.arange(3))
    assert top.tolist() == [1.0, 0.0, 0.0]
    assert margin.tolist() == pytest.approx([2 / NB_MARGIN_NATS, -2 / NB_MARGIN_NATS, -1.0])
    assert _bayes(np.array([0.0, -30.0]), np.arange(2))[1].tolist() == [1.0, -1.0]  # a wide lead, as before


def test_the_centroids_of_some_entries_are_those_of_all_entries_to_the_float(trained):
    # a paste's exception line is compared with its candidates only (Space.centroid_at): the same floats as the
    # cosines with every entry, read at those entries, whether the entries are few, many, or none
    _, _, model, _, texts, _ = trained
    char = model.spaces[0]
    n = len(char.sq_norms)
    rng = np.random.default_rng(5)
    checked = 0
    for text in texts[:300]:
        v = char.vocab.vector(text)
        every = char.centroid(v)
        for k in (0, 1, 7, n):
            at = np.sort(rng.choice(n, size=k, replace=False))
            assert char.centroid_at(v, at).tolist() == every[at].tolist(), text
            checked += bool(k and char.sums.dense is not None and (char.sums.dense_at[v.idx] >= 0).any())
    assert checked > 100  # the dense rows' products were summed for some entries only


def test_training_rows_are_the_same_with_the_nearest_parts_worked_out_before_the_evidence(bundled_kb):
    # the training helper works out the nearest parts of each text's closest entries while its parent gathers
    # the evidence, and only those of the entries the evidence adds after it: the same rows as all at once
    matcher = Matcher(bundled_kb, model=False)
    p = training.prepare(matcher.index.entries, silence=bundled_kb.silence)
    ahead = training.unaided(p.spaces, p.samples, ahead=True)
    added = [
        set(matcher.evidence_of(s.text)[0]) - set(done) for s, done in zip(p.samples, ahead.near_for, strict=True) if s.only < 0
    ]
    assert any(added)  # the evidence does add candidates the first pass had not worked out
    at_once = training.training_rows(p.model, p.spaces, p.samples, matcher.evidence_of, text_info)
    in_two = training.training_rows(p.model, p.spaces, p.samples, matcher.evidence_of, text_info, ahead)
    for (a, b) in zip(at_once, in_two, strict=True):
        assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
