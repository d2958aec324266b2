"""Phrase similarity picks the same candidates, with the same floats, whether the postings are summed in
Python or with NumPy, and whether the index was just built or loaded from the matcher cache."""

from __future__ import annotations

import pickle

from tracebot.authoring.evaluate import load_cases
from tracebot.matcher import ngrams
from tracebot.matcher.index import CompiledKB

from .test_matcher_cache import ROOT


def test_python_and_numpy_sums_and_a_pickled_index_give_identical_similarities(bundled_kb, monkeypatch) -> None:
    index = CompiledKB(bundled_kb)
    texts = [c.text for c in load_cases(ROOT / "tests" / "corpus" / "cases.jsonl") if c.text][:150]
    texts += [p for e in bundled_kb.entries for p in e.phrases][:150]
    loaded = pickle.loads(pickle.dumps(index.phrases))
    results = {}
    for name, threshold in (("python", 10**9), ("numpy", -1)):
        monkeypatch.setattr(ngrams, "NUMPY_FROM", threshold)
        monkeypatch.setattr(ngrams, "NUMPY_LOADED_FROM", threshold)
        results[name] = [index.phrases.similarities(t[:4000]) for t in texts]
    assert results["python"] == results["numpy"]
    assert [loaded.similarities(t[:4000]) for t in texts] == results["numpy"]
    assert sum(bool(r) for r in results["python"]) > 100


def test_long_made_up_words_are_not_kept_after_their_text_is_scored():
    # each word's n-grams are cached for the life of the bot: a paste of long unique words must not grow
    # that cache by the word's length each time (its size limit counts words, not bytes)
    import tracemalloc

    words = [("x" + c) * 2000 for c in "bcdefghij"]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for word in words:
            counts = ngrams.grams(word)
            assert counts["#" + word] == 1 and sum(counts.values()) == 4001
            del counts
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 100_000, f"{kept} bytes kept after scoring {len(words)} 4,000-character words"
    assert ngrams.grams("nccl nccl timeout") == ngrams.Counter(
        {"#nccl": 2, " nc": 2, "ncc": 2, "ccl": 2, "cl ": 2, "#timeout": 1, " ti": 1, "tim": 1, "ime": 1, "meo": 1, "eou": 1, "out": 1, "ut ": 1}
    )


def test_documents_that_tie_are_chosen_in_the_order_they_first_appear_by_python_and_numpy(monkeypatch) -> None:
    # copies of one phrase sum to the same contribution: which of them are among the candidates is decided by
    # which appears first in the postings, the same way by both sums
    # (an n-gram picks candidates when at most a twentieth of the documents have it: ~1,800 documents, so that
    # more copies than MAX_CANDIDATES share one)
    words = ["".join(chr(97 + (i // 26**k) % 26) for k in range(3)) + "word" for i in range(1700)]
    others = [f"{a} {b} issue" for a, b in zip(words, words[1:], strict=False)]
    copies = ["zyxwatchdog stalled on one rank" for _ in range(ngrams.MAX_CANDIDATES + 6)]
    index = ngrams.NgramIndex([*others[:700], *copies, *others[700:]])
    results = {}
    for name, threshold in (("python", 10**9), ("numpy", -1)):
        monkeypatch.setattr(ngrams, "NUMPY_FROM", threshold)
        monkeypatch.setattr(ngrams, "NUMPY_LOADED_FROM", threshold)
        results[name] = index.similarities("the zyxwatchdog stalled again")
    assert results["python"] == results["numpy"]
    assert len(results["numpy"]) == ngrams.MAX_CANDIDATES
    assert sorted(results["numpy"]) == list(range(700, 700 + ngrams.MAX_CANDIDATES))  # the first copies
