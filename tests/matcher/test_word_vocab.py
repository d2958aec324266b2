"""The word space's vocabulary as answering keeps it (its two-word terms as pairs of word numbers,
``training.WordCounts.vocab``) turns every text into the vector a dict of every term gives."""

from __future__ import annotations

import numpy as np

from tracebot.matcher import training
from tracebot.matcher.tfidf import Vocab

FIT = [
    "NCCL timeout: the job is stuck, then it hangs on rank 3",
    "CUDA out of memory. Tried to allocate 2.00 GiB; torch.cuda.OutOfMemoryError",
    "メモリ不足 で 落ち ました (out of memory)",
    "word word word word",
    "a single",
    "",
]
TEXTS = [
    *FIT,
    "the job hangs: NCCL timeout on rank 3, stuck again",  # known pairs, a pair in another order, concepts
    "memory out of CUDA memory out",
    "unknown words only here",
    "stuck stuck hang froze",
    "メモリ不足です out of memory word word",
]


def test_pairs_give_the_vectors_of_a_dict_of_every_term():
    counts = training.WordCounts()
    counts.fit_transform(FIT)
    idf = np.linspace(1.0, 2.0, len(counts.vocabulary_))
    kept = counts.vocab(idf)
    assert kept.pairs is not None and len(kept.pairs) > 10
    assert not any(" " in t for t in kept.index)  # every two-word term is a pair
    every = Vocab("word", counts.vocabulary_, idf)
    for text in TEXTS:
        a, b = kept.vector(text), every.vector(text)
        assert np.array_equal(a.idx, b.idx) and np.array_equal(a.val, b.val), text
        assert len(a.idx) or text in ("", "unknown words only here")
