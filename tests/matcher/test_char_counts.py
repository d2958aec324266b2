"""The character space's counts (``training.CharCounts``, numbering n-grams as 64-bit codes) are
scikit-learn's ``CountVectorizer(analyzer="char_wb")``'s on texts that test the codes: characters that sort
around the padding space, a NUL, a lone surrogate, characters above the BMP, one- and two-letter words,
prefixes of other n-grams; also when the characters are too many for the codes, and when the codes leave
no room to sort each with its position."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from tracebot.matcher import char_codes, training
from tracebot.matcher.tfidf import CHAR_NGRAMS, char_grams

FIT = [
    "a ab abc abcd abcde b ba bab",
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity)",
    "!x \x00nul\x00 x\x00 \x01\x1f tab\there ~~~ {}",
    "メモリ不足 です 🔥🔥 emoji😀x x😀 \U0010ffff",
    "lone \udcff surrogate \ud800x",
    "ÄÖÜ äöü straße İstanbul ǅ",
    "a ab abc abcd abcde",  # a text twice: counted twice
    "",
]
NEW = ["abcde zz 🔥 ｱｲｳ unknown£ \x00", "memory memory memory", "", "\udcff\udcff surrogate"]


def _reference() -> CountVectorizer:
    return CountVectorizer(analyzer="char_wb", ngram_range=CHAR_NGRAMS, lowercase=True, dtype=np.float64)


def _same(got, expected) -> bool:
    return got.shape == expected.shape and (got != expected).nnz == 0 and got.has_sorted_indices


def _check() -> None:
    reference = _reference()
    counts = training.CharCounts()
    got, expected = counts.fit_transform(FIT), reference.fit_transform(FIT)
    assert counts.vocabulary_ == reference.vocabulary_
    assert list(counts.vocabulary_) == sorted(counts.vocabulary_)  # numbered in the order of the terms
    assert _same(got, expected)
    assert _same(counts.transform(NEW), reference.transform(NEW))  # unknown characters and n-grams left out


def test_the_counts_are_scikit_learns_char_wb_on_odd_characters():
    _check()


def test_too_many_characters_for_the_codes_are_counted_all_the_same(monkeypatch):
    monkeypatch.setattr(char_codes, "MAX_BITS", 3)  # 6 characters at most
    assert char_codes.Alphabet.of(np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.uint32)) is None
    _check()


def test_codes_without_room_for_their_positions_are_numbered_by_a_plain_unique(monkeypatch):
    real = char_codes.numbered
    monkeypatch.setattr(char_codes, "numbered", lambda codes, bits: real(codes, 16))  # 64 bits of code
    _check()


def test_numbered_is_numpys_unique():
    rng = np.random.default_rng(5)
    for n, top in ((0, 1), (1, 5), (1000, 7), (5000, 1 << 40)):
        codes = rng.integers(0, top, n).astype(np.uint64)
        for bits in (4, 16):
            distinct, inverse, where = char_codes.numbered(codes, bits)
            expected, expected_inverse = np.unique(codes, return_inverse=True)
            assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse)
            assert np.array_equal(codes[where], distinct)


def test_a_word_s_codes_are_its_char_grams():
    words = ["a", "ab", "abcdef", "x😀y"]
    padded, points, lengths = char_codes.code_points(words)
    alphabet = char_codes.Alphabet.of(points)
    grams = char_codes.word_grams(padded, alphabet.numbers(points), lengths, alphabet.bits)
    for i, w in enumerate(words):
        assert sorted(grams.terms(np.flatnonzero(grams.rows == i))) == sorted(char_grams(w))


@pytest.mark.parametrize("texts", [[], [""], ["   "]])
def test_no_words_fit_an_empty_vocabulary(texts):
    counts = training.CharCounts()
    got = counts.fit_transform(texts)
    assert got.shape == (len(texts), 0) and counts.vocabulary_ == {}
    assert counts.transform(["abc"]).shape == (1, 0)
