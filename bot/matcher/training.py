"""Training the ranking model (:mod:`tracebot.matcher.model`) from the knowledge base: the one module that
imports SciPy, and only when a model is trained (a cached model is plain numpy arrays). It does not import
scikit-learn (its import was ~0.55 s of the training helper's start): it counts, weighs and regresses as
scikit-learn's ``TfidfVectorizer`` and ``LogisticRegression`` do (:class:`CharCounts`, :class:`WordCounts`,
:class:`Tfidf`, :mod:`tracebot.matcher.logistic`), and the tests hold them to scikit-learn.

Training texts: each entry's ``examples.match`` and phrases (right answer: that entry), its
``examples.no_match`` (that entry must not answer), the knowledge base's silence texts
(:mod:`tracebot.knowledge.silence`: nothing may answer; every candidate's row is a negative) and, for
cross-validation, extra labelled cases. For each text and candidate entry
:func:`~tracebot.matcher.model.rows` computes the features; logistic regressions learn P(right first
answer) in two steps (:func:`_fit`: which candidate of a text is right, from within-text comparisons; then
how likely the best is right), and out-of-fold first answers give the probability at which first answers
are right :data:`~tracebot.matcher.model.TARGET_PRECISION` of the time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from itertools import compress

import numpy as np
from scipy import sparse
from scipy.special import expit
from threadpoolctl import ThreadpoolController

from tracebot.config import DEFAULT_THRESHOLD
from tracebot.knowledge.entry import Entry
from tracebot.knowledge.silence import Silence
from tracebot.matcher import char_codes
from tracebot.matcher.features import TextInfo
from tracebot.matcher.logistic import group_folds, logistic
from tracebot.matcher.model import (
    BAYES_ALPHA,
    BLIND_WEIGHT,
    CONFIDENCE_COLUMNS,
    FEATURES,
    HARDEST_WRONG,
    HUB_NEIGHBOURS,
    PER_TEXT,
    POINT_RANGE,
    SEED,
    TARGET_PRECISION,
    Bayes,
    Evidence,
    Gather,
    RankingModel,
    TextInfoOf,
    candidates,
    closest,
    precision_point,
    rows,
)
from tracebot.matcher.samples import Sample, entry_texts, gathered_keys, training_texts
from tracebot.matcher.samples import gathered as evidence_of
from tracebot.matcher.tfidf import (
    WORD_NGRAMS,
    Columns,
    Space,
    Vocab,
    dense_row,
    ranges,
    word_char_grams,
    word_grams,
    word_terms,
)


class CharCounts:
    """scikit-learn's ``CountVectorizer(analyzer=char_grams)``, counted a distinct word at a time: a text's
    character n-grams are its words' n-grams (``char_wb``), so its counts are its words' counts (texts ×
    words) times each word's n-gram counts (words × n-grams), one sparse product. The distinct words'
    n-grams are numbered all at once in NumPy (:mod:`tracebot.matcher.char_codes`): numbering them one at a
    time in Python was ~5 s of CPU at 1,000 entries that do not repeat each other's texts (4.3 million
    n-grams of 101,572 distinct words). ``tests/matcher/test_model.py`` holds the two to the same matrix.
    The texts to fit on may be given a few at a time (:meth:`add`) before :meth:`fit_transform`: the
    training helper splits each entry's texts into words as its parent hands them over."""

    def __init__(self) -> None:
        self.vocabulary_: dict[str, int] = {}
        # the fitted alphabet, and each feature's n-gram as a number (ascending: feature order); no alphabet
        # when it was too large for numbers (then words are looked up in vocabulary_, n-gram by n-gram)
        self._alphabet: char_codes.Alphabet | None = None
        self._codes = np.zeros(0, dtype=np.uint64)
        # while fitting: the distinct words in order of first appearance, and the texts added so far (their
        # words' numbers, one text after the other, and how many each has)
        self._words: dict[str, int] = {}
        self._ids: list[int] = []
        self._lens: list[int] = []

    def add(self, texts: Iterable[str]) -> None:
        """More texts to fit on, after those added before (:meth:`fit_transform` then fits on them all)."""
        _split(texts, self._words, self._ids, self._lens)

    def fit_transform(self, texts: list[str] | None = None) -> sparse.csr_matrix:
        """Fit on ``texts`` (``None``: on those :meth:`add` was given)."""
        self.add(texts or ())
        words, ids, lens = list(self._words), self._ids, self._lens
        self._words, self._ids, self._lens = {}, [], []
        padded, points, lengths = char_codes.code_points(words)
        self._alphabet = char_codes.Alphabet.of(points)
        if self._alphabet is None:
            self.vocabulary_ = _numbering({g for w in words for g in word_char_grams(w)})
            return _counted(ids, lens, self._looked_up(words))
        bits = self._alphabet.bits
        grams = char_codes.word_grams(padded, self._alphabet.numbers(points), lengths, bits)
        self._codes, features, where = char_codes.numbered(grams.codes, bits)
        self.vocabulary_ = dict(zip(grams.terms(where), range(len(where)), strict=True))
        return _counted(ids, lens, _csr(grams.rows, features, (len(words), len(where))))

    def vocab(self, idf: np.ndarray) -> Vocab:
        """The fitted vocabulary for answering: the n-grams as their numbers (when they have them)."""
        if self._alphabet is None:
            return Vocab("char", self.vocabulary_, idf)
        return Vocab("char", {}, idf, alphabet=self._alphabet, codes=self._codes)

    def transform(self, texts: list[str]) -> sparse.csr_matrix:
        """The texts' counts of the fitted n-grams (an n-gram outside the vocabulary is left out)."""
        words: dict[str, int] = {}
        ids: list[int] = []
        lens: list[int] = []
        _split(texts, words, ids, lens)
        return _counted(ids, lens, self._looked_up(list(words)))

    def _looked_up(self, words: list[str]) -> sparse.csr_matrix:
        """(words × features) each word's counts of the fitted n-grams."""
        shape = (len(words), len(self.vocabulary_))
        if self._alphabet is None:
            index = self.vocabulary_
            found = [[index[g] for g in word_char_grams(w) if g in index] for w in words]
            return _csr(np.repeat(np.arange(len(words)), [len(f) for f in found]), [i for f in found for i in f], shape)
        return _csr(*char_codes.found(words, self._alphabet, self._codes), shape)


def _split(texts: Iterable[str], words: dict[str, int], ids: list[int], lens: list[int]) -> None:
    """Each text's words (lower-cased, split at whitespace, as ``char_wb`` splits): numbered in ``words``
    (in order of first appearance), their numbers added to ``ids`` and their count to ``lens``."""
    for text in texts:
        split = text.lower().split()
        ids += [words.setdefault(w, len(words)) for w in split]
        lens.append(len(split))


def _csr(rows, cols, shape: tuple[int, int]) -> sparse.csr_matrix:
    """A count matrix with a 1 for each (row, column) pair (repeated pairs add up)."""
    return sparse.csr_matrix((np.ones(len(cols)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))), shape=shape)


def _counted(ids: list[int], lens: list[int], by_word: sparse.csr_matrix) -> sparse.csr_matrix:
    """(texts × features) counts: each text's words (``ids``, ``lens``: :func:`_split`) times ``by_word``
    (words × features counts). Whole counts, added exactly: the matrix counting every n-gram gives."""
    starts = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    texts = sparse.csr_matrix((np.ones(len(ids)), np.asarray(ids, dtype=np.int64), starts), shape=(len(lens), by_word.shape[0]))
    m = sparse.csr_matrix(texts @ by_word)
    m.sort_indices()
    return m


def _numbering(terms: Iterable[str]) -> dict[str, int]:
    """Features numbered in the order of their terms, as scikit-learn numbers them."""
    ordered = sorted(terms)
    return dict(zip(ordered, range(len(ordered)), strict=True))


class WordCounts:
    """scikit-learn's ``CountVectorizer(analyzer=word_grams)``: each text's features (:func:`word_grams`)
    counted, numbered in the order of their terms; in a text that :meth:`transform` counts, a term
    outside the vocabulary is left out. ``tests/matcher/test_model.py`` holds the two to the same
    matrix. :meth:`add` analyses texts before :meth:`fit_transform`, as :class:`CharCounts` does."""

    def __init__(self) -> None:
        self.vocabulary_: dict[str, int] = {}
        # the two-word terms: each as its words' numbers (the first's in the top 32 bits), and its own
        self.pairs = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        # while fitting: every text's features, one text after the other, how many, how many are words
        self._grams: list[str] = []
        self._lens: list[int] = []
        self._words: list[int] = []

    def add(self, texts: Iterable[str]) -> None:
        for text in texts:
            tokens, concepts = word_terms(text)
            grams = word_grams(text) if WORD_NGRAMS != (1, 2) else [*tokens, *map(" ".join, zip(tokens, tokens[1:], strict=False)), *concepts]
            self._grams += grams
            self._lens.append(len(grams))
            self._words.append(len(tokens))

    def fit_transform(self, texts: list[str] | None = None) -> sparse.csr_matrix:
        self.add(texts or ())
        grams, lens, words = self._grams, np.array(self._lens, dtype=np.int64), np.array(self._words, dtype=np.int64)
        self._grams, self._lens, self._words = [], [], []
        self.vocabulary_ = _numbering(set(grams))
        cols = np.fromiter(map(self.vocabulary_.__getitem__, grams), dtype=np.int64, count=len(grams))
        # a text's features are its words, then its runs of two words (word_grams): each pair's words' numbers
        starts, two = np.cumsum(lens) - lens, np.maximum(words - 1, 0)
        first = ranges(starts, two)
        terms, at = np.unique(cols[ranges(starts + words, two)], return_index=True)
        codes = cols[first[at]] << 32 | cols[first[at] + 1]
        order = np.argsort(codes, kind="stable")
        self.pairs = (codes[order], terms[order])
        return _matrix(cols, lens, len(self.vocabulary_))

    def vocab(self, idf: np.ndarray) -> Vocab:
        """The fitted vocabulary for answering: the two-word terms as :attr:`pairs`, the others in a dict."""
        if WORD_NGRAMS != (1, 2):
            return Vocab("word", self.vocabulary_, idf)
        single = np.ones(len(self.vocabulary_), dtype=bool)
        single[self.pairs[1]] = False
        return Vocab("word", dict(compress(self.vocabulary_.items(), single.tolist())), idf, *self.pairs)

    def transform(self, texts: list[str]) -> sparse.csr_matrix:
        index = self.vocabulary_
        found = [[index[g] for g in word_grams(t) if g in index] for t in texts]
        return _matrix(np.array([i for f in found for i in f], dtype=np.int64), [len(f) for f in found], len(index))


def _matrix(cols: np.ndarray, lens: list[int], n: int) -> sparse.csr_matrix:
    """(texts × ``n`` features) counts of each text's features (``cols``, ``lens`` of them per text)."""
    m = _csr(np.repeat(np.arange(len(lens)), lens), cols, (len(lens), n))
    m.sum_duplicates()  # counts; also sorts each row's columns
    return m


class Tfidf:
    """scikit-learn's ``TfidfTransformer(sublinear_tf=True)`` (smoothed idf, L2 norm): its ``idf_`` is
    :func:`_idf`'s, and :meth:`transform` takes the same steps on the same floats (log, +1, times the
    idf, then each row divided by its norm, the squares added one after the other as scikit-learn's
    ``inplace_csr_row_normalize_l2`` adds them)."""

    def __init__(self) -> None:
        self.idf_ = np.zeros(0)

    def transform(self, counts: sparse.csr_matrix) -> sparse.csr_matrix:
        m = counts.astype(np.float64, copy=True)
        np.log(m.data, m.data)
        m.data += 1.0
        m.data *= self.idf_[m.indices]
        norms = _sequential_row_sums(m.data * m.data, m.indptr)
        np.sqrt(norms, out=norms)
        norms[norms == 0.0] = 1.0  # an empty row stays empty
        m.data /= np.repeat(norms, np.diff(m.indptr))
        return m


def _sequential_row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each CSR row's values added from first to last, as a C loop adds them (``np.add.reduceat`` adds
    in pairs, other floats): position by position over the rows at once, the longest rows first."""
    lens = np.diff(indptr)
    order = np.argsort(-lens, kind="stable")
    longest = lens[order]
    starts = indptr[:-1][order]
    sums = np.zeros(len(lens))
    # how many rows (of the longest first) have a value at each position
    active = np.searchsorted(-longest, -np.arange(int(longest[0]) if len(lens) else 0), side="left")
    for k, n in enumerate(active):
        sums[:n] += values[starts[:n] + k]
    out = np.empty(len(lens))
    out[order] = sums
    return out


class Vectorizer:
    """scikit-learn's ``TfidfVectorizer`` as its two halves (``CountVectorizer``, then
    ``TfidfTransformer``: the same numbers), so that each distinct text is analysed once. A large
    knowledge base repeats many texts (shared anchors, titles, fixes; its training texts and their blind
    twins), and the analysis, a Python loop over every n-gram, was most of fitting."""

    def __init__(self, counts: CharCounts):
        self.counts = counts
        self.tfidf = Tfidf()
        self._first: dict[str, int] = {}  # the texts added to fit on: each distinct one's number
        self._copy: list[int] = []  # and the number of each text's distinct copy

    def add(self, texts: Iterable[str]) -> None:
        """More texts to fit on (:meth:`fit_transform` then fits on all those added): each distinct one is
        analysed now, the first time it comes."""
        first, copy = self._first, self._copy
        new = []
        for t in texts:
            i = first.get(t)
            if i is None:
                i = first[t] = len(first)
                new.append(t)
            copy.append(i)
        self.counts.add(new)

    @property
    def vocabulary_(self) -> dict[str, int]:
        return self.counts.vocabulary_

    @property
    def idf_(self) -> np.ndarray:
        return self.tfidf.idf_

    def fit_transform(self, texts: list[str] | None = None) -> sparse.csr_matrix:
        """Fit on ``texts`` (``None``: on those :meth:`add` was given) and return their vectors."""
        self.add(texts or ())
        n_distinct, inverse = len(self._first), np.array(self._copy, dtype=np.int64)
        self._first, self._copy = {}, []
        counts = _sorted(self.counts.fit_transform())
        # document frequencies count every copy: from each distinct text's number of copies, not from
        # the matrix of every copy (at 1,000 entries, copying it and counting in it was a third of fitting)
        self.tfidf.idf_ = _idf(counts, np.bincount(inverse, minlength=n_distinct))
        return self.tfidf.transform(counts)[inverse]

    def transform(self, texts: list[str]) -> sparse.csr_matrix:
        distinct, inverse = _distinct(texts)
        return self.tfidf.transform(_sorted(self.counts.transform(distinct)))[inverse]


def _idf(counts: sparse.csr_matrix, copies: np.ndarray) -> np.ndarray:
    """``TfidfTransformer(smooth_idf=True).fit(X).idf_`` (the same operations, so the same floats) for
    the matrix ``X`` that holds row ``i`` of ``counts`` ``copies[i]`` times."""
    df = np.bincount(counts.indices, weights=np.repeat(copies, np.diff(counts.indptr)).astype(np.float64), minlength=counts.shape[1])
    df += 1.0
    idf = np.full_like(df, fill_value=int(copies.sum()) + 1)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    return idf


def _row_sq_norms(m: sparse.csr_matrix) -> np.ndarray:
    """Each row's sum of squares, added as ``m.multiply(m).sum(axis=1)`` adds them (``np.add.reduceat``
    over each non-empty row's values: the same floats), without building the squared matrix (2.4 million
    values at 1,000 entries). A row's repeated columns are added before squaring, as scipy does (on a
    copy: the sums training reads have none, and their order is scipy's to the float)."""
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    out = np.zeros(m.shape[0])
    filled = np.flatnonzero(np.diff(m.indptr))
    out[filled] = np.add.reduceat(m.data * m.data, m.indptr[filled])
    return out


def _sorted(m: sparse.csr_matrix) -> sparse.csr_matrix:
    """``m`` with each row's columns in order (CountVectorizer renumbers its features after counting), so
    the copies made of its rows are too, and exporting them sorts nothing."""
    m.sort_indices()
    return m


def _distinct(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts, and for each text the index of its copy among them."""
    first: dict[str, int] = {}
    inverse = np.array([first.setdefault(t, len(first)) for t in texts], dtype=np.int64)
    return list(first), inverse


def vectorizers() -> tuple[Vectorizer, Vectorizer]:
    """The two TF-IDF spaces, as :mod:`tracebot.matcher.tfidf` reproduces them."""
    # char_grams is scikit-learn's char_wb analyzer (tests hold them equal) with each word's n-grams
    # cached: fitting over a large knowledge base's texts is mostly this analysis.
    char = Vectorizer(CharCounts())
    # word_grams is scikit-learn's word analyzer (WORD_PATTERN, WORD_NGRAMS) plus the glossary's concepts.
    word = Vectorizer(WordCounts())
    return char, word


def _columns(m: sparse.spmatrix) -> Columns:
    m = sparse.csr_matrix(m)
    m.sort_indices()
    # 32-bit values (weights of unit vectors; products are taken in float64) and the narrowest column
    # indices that hold every feature or entry number (16 bits below 65,536 columns: the entries' sums and
    # naive Bayes always at 1,000 entries, the character parts while their n-grams are that few): the cached
    # model is smaller to write and to read (107.6 -> 86 MB at the bench's 1,000 entries), the numbers the same.
    index = np.uint16 if m.shape[1] <= np.iinfo(np.uint16).max + 1 else np.int32
    return Columns(m.indptr.astype(np.int64), m.indices.astype(index), m.data.astype(np.float32), m.shape[1])


class FittedSpaces:
    """The spaces as scikit-learn fitted them (for training's batch products), and their export."""

    def __init__(
        self, parts: list[str], owners: list[int], n_entries: int, added: tuple[Vectorizer, Vectorizer] | None = None
    ):
        """``added``: :func:`vectorizers` that were given ``parts`` already (:meth:`Vectorizer.add`)."""
        if list(owners) != sorted(owners) or set(owners) != set(range(n_entries)):
            raise ValueError("parts must be grouped by entry, every entry with at least one part")
        self.n_entries = n_entries
        self.vectorizers = added or vectorizers()
        mats = [v.fit_transform(None if added else parts) for v in self.vectorizers]
        owner = sparse.csr_matrix(
            (np.ones(len(owners)), (owners, np.arange(len(owners)))), shape=(n_entries, len(parts))
        )
        self.sums = [_sorted((owner @ m).tocsr()) for m in mats]  # entries × features
        # and features × entries, transposed once: every product with the sums (and the export) reads them
        # so, and scipy transposed the character sums (2.4 million values at 1,000 entries) at each one
        self.sums_t = [_sorted(s.T.tocsr()) for s in self.sums]
        self.sq_norms = [_row_sq_norms(s) for s in self.sums]
        self.part_columns = [_columns(m) for m in mats]  # parts × features, as exported
        self.starts = np.append(np.searchsorted(np.asarray(owners), np.arange(n_entries)), len(parts))
        # naive Bayes over the word space: the entries' summed vectors are its counts
        counts = self.sums[1]
        self.nb_totals = np.asarray(counts.sum(axis=1)).ravel()
        self.nb_weights = counts.copy()
        self.nb_weights.data = np.log1p(self.nb_weights.data / BAYES_ALPHA)
        self.nb_weights_t = _sorted(self.nb_weights.T.tocsr())
        self.nb_base = np.log(BAYES_ALPHA) - np.log(self.nb_totals + BAYES_ALPHA * counts.shape[1])

    def export(self) -> list[Space]:
        out = []
        for v, st, sq, cols in zip(self.vectorizers, self.sums_t, self.sq_norms, self.part_columns, strict=True):
            # the vocabulary as answering reads it (CharCounts.vocab, WordCounts.vocab)
            vocab = v.counts.vocab(v.idf_.astype(np.float64))
            out.append(Space(vocab, _columns(st).with_dense_rows(), sq, cols, self.starts))
        return out

    def vectors(self, texts: list[str]) -> list[sparse.csr_matrix]:
        """The texts' vectors in both spaces (character, word)."""
        return [v.transform(texts) for v in self.vectorizers]

    def bayes(self) -> Bayes:
        return Bayes(_columns(self.nb_weights_t).with_dense_rows(), self.nb_base)

    def log_likelihoods(self, v: sparse.csr_matrix, leave_out: list[int] | None = None) -> np.ndarray:
        """(texts × entries) naive Bayes log-likelihoods (:class:`~tracebot.matcher.model.Bayes`); with
        ``leave_out``, each text's own counts are taken out of its entry's."""
        v = sparse.csr_matrix(v)
        sizes = np.asarray(v.sum(axis=1)).ravel()
        out = (v @ self.nb_weights_t).toarray() + np.outer(sizes, self.nb_base)
        if leave_out is not None:
            rows = np.flatnonzero(np.asarray(leave_out) >= 0)
            entries = np.asarray(leave_out)[rows]
            x = v[rows]
            # the entry's counts without this text, at the text's words
            rest = (self.sums[1][entries].multiply(x.astype(bool)) - x).tocsr()
            rest.data = np.log1p(np.maximum(rest.data, 0.0) / BAYES_ALPHA)
            totals = np.maximum(self.nb_totals[entries] - sizes[rows], 0.0)
            base = np.log(BAYES_ALPHA) - np.log(totals + BAYES_ALPHA * self.nb_weights.shape[1])
            out[rows, entries] = np.asarray(x.multiply(rest).sum(axis=1)).ravel() + sizes[rows] * base
        return out

    def exceptions(self, infos: list[TextInfo]) -> np.ndarray:
        """(texts × entries) character centroid cosines of each text's exception line."""
        exceptions = [i.exception for i in infos]
        return self.similarities([self.vectorizers[0].transform(exceptions)], texts=exceptions)[0]

    def similarities(
        self, vecs: list[sparse.csr_matrix], leave_out: list[int] | None = None, texts: list[str] | None = None
    ) -> list[np.ndarray]:
        """Centroid cosines of each row of ``vecs`` (``texts``: what each row is the vector of, so that
        each distinct text's products are taken once), each left out of its ``leave_out`` entry."""
        copy = np.arange(vecs[0].shape[0])
        if texts is not None:
            copy = _distinct(texts)[1]
            first = np.unique(copy, return_index=True)[1]  # the first row of each distinct text
            vecs = [v[first] for v in vecs]
        out = []
        for v, st, sq in zip(vecs, self.sums_t, self.sq_norms, strict=False):
            dots = (v @ st).toarray()[copy]
            norms = np.tile(sq, (len(copy), 1))
            if leave_out is not None:
                self_sq = np.asarray(v.multiply(v).sum(axis=1)).ravel()[copy]
                own = np.asarray(leave_out)
                i = np.flatnonzero(own >= 0)  # each text once: no pair is updated twice
                ei, sq_i = own[i], self_sq[i]
                dots[i, ei] -= sq_i
                norms[i, ei] = np.maximum(norms[i, ei] - 2 * (dots[i, ei] + sq_i) + sq_i, 0.0)
            out.append(dots / np.sqrt(np.maximum(norms, 1e-12)))
        return out

    def nearest(
        self,
        texts: list[str],
        vecs: list[sparse.csr_matrix],
        cands_of: list[list[int]],
        leave_out: list[int] | None = None,
        out: list[np.ndarray] | None = None,
    ) -> list[np.ndarray]:
        """(texts × entries) cosines of each text (``vecs``: :meth:`vectors`) with the closest part of each
        of its candidates (0 for other entries), character and word, as :meth:`Space.nearest` computes
        them; with ``leave_out``, each text's own part (an index into the parts, or -1) is left out. Each
        distinct text is compared once with the parts of all its candidates, with the products answering
        uses (:meth:`Columns.run_dots`): comparing every text with every part (a texts × parts sparse
        product) was most of training at 1,000 entries. ``out``: filled in (at these candidates only), not
        new arrays."""
        samples_of: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            samples_of.setdefault(text, []).append(i)
        if out is None:
            out = [np.zeros((len(texts), self.n_entries)) for _ in vecs]
        for same in samples_of.values():
            entries = np.array(sorted({ei for i in same for ei in cands_of[i]}), dtype=np.int64)
            if not len(entries):
                continue
            first, count = self.starts[entries], self.starts[entries + 1] - self.starts[entries]
            at = {int(e): (int(f), int(k)) for e, f, k in zip(entries, np.cumsum(count) - count, count, strict=True)}
            for v, cols, res in zip(vecs, self.part_columns, out, strict=True):
                lo, hi = v.indptr[same[0]], v.indptr[same[0] + 1]
                sims = cols.run_dots(first, count, dense_row(v.indices[lo:hi], v.data[lo:hi], cols.n))
                best = np.maximum.reduceat(sims, np.cumsum(count) - count)
                for i in same:
                    c = np.asarray(cands_of[i], dtype=np.int64)
                    res[i, c] = best[np.searchsorted(entries, c)]
                    own = leave_out[i] if leave_out is not None else -1
                    if own < 0:
                        continue
                    ei = int(np.searchsorted(self.starts, own, side="right")) - 1
                    if ei in at and ei in cands_of[i]:
                        f, k = at[ei]
                        mine = sims[f : f + k].copy()
                        mine[own - self.starts[ei]] = 0.0
                        res[i, ei] = mine.max()
        return out


@dataclass
class Trained:
    """A model with what trained it (scikit-learn's objects, the training texts and rows)."""

    model: RankingModel
    spaces: FittedSpaces
    classifier: TwoSteps  # the ranking model as training computes it (rows → probabilities)
    samples: list[Sample]
    parts: list[str]
    xs: list[np.ndarray]
    ys: list[np.ndarray]


@dataclass
class Prepared:
    """What training takes from the entries alone, before any text is compared with the matcher: the
    training texts, the fitted TF-IDF spaces and the model before its regressions (:func:`prepare`)."""

    samples: list[Sample]
    parts: list[str]
    spaces: FittedSpaces
    model: RankingModel
    unaided: Unaided | None = None  # the rows' parts that need no evidence (:func:`unaided`), once computed


class Streamed:
    """What :func:`prepare` can do with each entry alone, done as the entries come (:meth:`add`): the
    training helper is handed them a file at a time while its parent parses the rest
    (:mod:`tracebot.matcher.train_child`). Each entry's words (:func:`_words`), and its TF-IDF parts
    analysed into n-grams and numbered (:meth:`Vectorizer.add`); :func:`prepare` fits on what was added
    when its entries are these, in this order, and their parts are the ones added (nothing left out)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.words: list[str] = []
        self.parts: list[str] = []
        self.vectorizers = vectorizers()

    def add(self, entries: Iterable[Entry]) -> None:
        for e in entries:
            own = entry_texts(e)
            self.entries.append(e)
            self.words.append(_words(e))
            self.parts += own
            for v in self.vectorizers:
                v.add(own)


@dataclass
class Unaided:
    """The parts of the training rows that need no matcher evidence: each training text's vectors in both
    spaces, its centroid cosines (character, word) and its naive Bayes log-likelihoods."""

    vecs: list[sparse.csr_matrix]
    cent_c: np.ndarray
    cent_w: np.ndarray
    nb: np.ndarray
    # with ``ahead``: the nearest parts' cosines (:meth:`FittedSpaces.nearest`) of the candidates each text
    # has whatever its evidence (its closest entries and its right answer, or its only one), and those
    near: list[np.ndarray] | None = None
    near_for: list[list[int]] | None = None


def unaided(fitted: FittedSpaces, samples: list[Sample], *, ahead: bool = False) -> Unaided:
    """:class:`Unaided` of ``samples``, each left out of the entry its text is a part of; ``ahead``: with the
    nearest parts of the candidates known without evidence (the training helper computes them while its
    parent gathers the evidence, which adds only a few candidates more; the cosines are the same computed
    either way, each entry's on its own)."""
    texts = [s.text for s in samples]
    vecs = fitted.vectors(texts)
    cent_c, cent_w = fitted.similarities(vecs, [s.part_of for s in samples], texts)
    u = Unaided(vecs, cent_c, cent_w, fitted.log_likelihoods(vecs[1], [s.part_of for s in samples]))
    if ahead:
        u.near_for = [
            [s.only] if s.only >= 0 else [*near, *([s.gold] if s.gold >= 0 and s.gold not in near else [])]
            for s, near in ((s, closest(cent_c[si] + cent_w[si]) if s.only < 0 else []) for si, s in enumerate(samples))
        ]
        u.near = fitted.nearest(texts, vecs, u.near_for, [s.part for s in samples])
    return u


def train(entries: list[Entry], gather: Gather, info_of: TextInfoOf, *, prepared: Prepared | None = None, **leave_out) -> RankingModel:
    """:func:`fit`, then the confidence point calibrated on out-of-fold first answers."""
    t = fit(entries, gather, info_of, prepared=prepared, **leave_out)
    calibrate(t.model, t.samples, t.xs, t.ys)
    return t.model


def calibrate(model: RankingModel, samples: list[Sample], xs: list[np.ndarray], ys: list[np.ndarray]) -> None:
    """Set ``model``'s confidence point, statements and report from :func:`_calibrate` (the last step of
    :func:`train`, which ``bench/profile_cold_start.py`` times on its own)."""
    model.p_confident, model.statements, model.report = _calibrate(samples, xs, ys)
    model.report["p_statement"] = round(model.statement_point(DEFAULT_THRESHOLD), 4)  # at the default threshold


def prepare(
    entries: list[Entry],
    *,
    leave_out_sources: Iterable[str] = (),
    leave_out_examples: Iterable[str] = (),
    extra: Iterable[tuple[str, str | None]] = (),
    silence: Iterable[Silence] = (),
    rows_begun: bool = False,
    streamed: Streamed | None = None,
) -> Prepared:
    """Training's first half, which needs no matcher: the training texts of ``entries`` (their examples,
    minus those of entries citing a source in ``leave_out_sources`` and those in ``leave_out_examples``),
    the ``silence`` texts (minus those copied from a source in ``leave_out_sources``) and ``extra`` (text,
    expected entry id or None) cases; the TF-IDF spaces fitted on the entries. The training helper
    (:mod:`tracebot.matcher.train_child`) does this while its parent is still building the matcher, and
    then, with ``rows_begun``, the rows' parts that need no evidence (:func:`unaided`) while it waits for
    the parent's "go" (after it, they were computed while the parent gathered the evidence, which the
    helper then waited for). ``streamed``: what was done with ``entries`` as they came (:class:`Streamed`),
    used when it was done with these entries and their parts."""
    samples, parts, owners = training_texts(entries, leave_out_sources, leave_out_examples, extra, silence)
    if streamed is not None and not (streamed.entries == entries and streamed.parts == parts):
        streamed = None  # other entries, or texts left out: fitted here from the start
    spaces = FittedSpaces(parts, owners, len(entries), streamed.vectorizers if streamed else None)
    p = Prepared(samples, parts, spaces, untrained_model(entries, spaces, streamed.words if streamed else None))
    if rows_begun:
        p.unaided = unaided(spaces, samples, ahead=True)
    return p


def fit(entries: list[Entry], gather: Gather, info_of: TextInfoOf, *, prepared: Prepared | None = None, **leave_out) -> Trained:
    """Train on ``entries`` (what :func:`prepare` takes, with ``leave_out``; or ``prepared``, what it
    returned for them): the training texts' feature rows, then the regressions."""
    p = prepared or prepare(entries, **leave_out)
    xs, ys = training_rows(p.model, p.spaces, p.samples, gather, info_of, p.unaided)
    clf = fit_regressions(p.model, xs, ys, p.samples)
    return Trained(p.model, p.spaces, clf, p.samples, p.parts, xs, ys)


def untrained_model(entries: list[Entry], spaces: FittedSpaces, words: list[str] | None = None) -> RankingModel:
    """The model's fitted spaces and what it knows of each entry (``words``: each one's :func:`_words`,
    when known already), before its regressions are fitted."""
    return RankingModel(
        spaces=spaces.export(),
        coef=np.zeros(0),
        intercept=0.0,
        entry_words=words if words is not None else [_words(e) for e in entries],
        roles=np.array([e.role == "root-cause" for e in entries], dtype=float),
        platforms=[frozenset(e.platform) for e in entries],
        bayes=spaces.bayes(),
    )


def fit_regressions(model: RankingModel, xs: list[np.ndarray], ys: list[np.ndarray], samples: list[Sample]) -> TwoSteps:
    """Fit the ranking and the confidence regressions (:func:`_fit`) into ``model``; the ranking one's
    two steps are returned (for tests to hold the model to)."""
    clf = _fit(xs, ys, samples, hardest=HARDEST_WRONG)
    model.coef, model.intercept = clf.linear()
    model.conf_coef, model.conf_intercept = _fit(xs, ys, samples, CONFIDENCE_COLUMNS).linear()
    return clf


def training_rows(
    model: RankingModel,
    fitted: FittedSpaces,
    samples: list[Sample],
    gather: Gather,
    info_of: TextInfoOf,
    begun: Unaided | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per sample, its candidates' feature rows and their labels (1: the right answer); ``begun``: their
    parts that need no evidence, computed already (:func:`unaided`)."""
    # first what needs no evidence: the training helper's evidence may still be on its way (gather)
    texts = [s.text for s in samples]
    u = begun or unaided(fitted, samples)
    vecs, cent_c, cent_w, nb = u.vecs, u.cent_c, u.cent_w, u.nb
    seen = evidence_of(samples, gather)
    gathered = []
    for s, key in zip(samples, gathered_keys(samples), strict=True):
        evidence, prose = seen[key]
        if s.blind:
            evidence = {ei: Evidence(strong=ev.strong, lines=ev.lines) for ei, ev in evidence.items() if ev.strong}
        gathered.append((evidence, prose))
    infos = [info_of(s.text, prose) for s, (_, prose) in zip(samples, gathered, strict=True)]
    exc = fitted.exceptions(infos)
    # the rows read each entry's hubness: from these texts, as answering reads it from the trained model
    model.hubness = hubness(samples, (cent_c, cent_w))
    cands_of = []
    for si, s in enumerate(samples):
        if s.only >= 0:
            cands = [s.only]
        else:
            cands = candidates(cent_c[si] + cent_w[si], gathered[si][0])
            if s.gold >= 0 and s.gold not in cands:
                cands.append(s.gold)
        cands_of.append(cands)
    if u.near is None:
        near_c, near_w = fitted.nearest(texts, vecs, cands_of, [s.part for s in samples])
    else:  # computed already for the candidates known without evidence: the others' now
        rest = [[c for c in cands if c not in set(done)] for cands, done in zip(cands_of, u.near_for, strict=True)]
        near_c, near_w = fitted.nearest(texts, vecs, rest, [s.part for s in samples], out=u.near)
    sims = [cent_c, cent_w, near_c, near_w, exc, nb]
    xs, ys = [], []
    for si, s in enumerate(samples):
        evidence = gathered[si][0]
        cands = cands_of[si]
        xs.append(rows(model, infos[si], evidence, [a[si] for a in sims], cands))
        ys.append(np.array([ei == s.gold for ei in cands], dtype=int))
    return xs, ys


def hubness(samples: list[Sample], cosines: tuple[np.ndarray, ...], k: int = HUB_NEIGHBOURS) -> np.ndarray:
    """Per space and entry (``cosines``: texts × entries, one array per space), the mean cosine of the
    entry with the ``k`` texts of other entries closest to it: CSLS's ``r_e``
    (:func:`~tracebot.matcher.model.hub_margins`). Each distinct text with a right answer counts once
    (a blind twin is the same text); silence and ``no_match`` texts do not count."""
    first: dict[str, int] = {}
    for i, s in enumerate(samples):
        if s.gold >= 0 and s.only < 0:
            first.setdefault(s.text, i)
    at = np.array(sorted(first.values()), dtype=np.int64)
    gold = np.array([samples[i].gold for i in at], dtype=np.int64)
    out = np.zeros((len(cosines), cosines[0].shape[1]))
    k = min(k, len(at) - 1)
    if k < 1:
        return out
    for space, cos in enumerate(cosines):
        own_out = cos[at].astype(np.float64)
        own_out[np.arange(len(at)), gold] = -np.inf  # an entry's own texts are not other problems
        closest = -np.partition(-own_out, k - 1, axis=0)[:k]
        # an entry with fewer than k other entries' texts (never with a real knowledge base): those it has
        found = np.isfinite(closest)
        out[space] = np.where(found, closest, 0.0).sum(axis=0) / np.maximum(found.sum(axis=0), 1)
    return out


def _fit(
    xs: list[np.ndarray],
    ys: list[np.ndarray],
    samples: list[Sample],
    columns: np.ndarray | None = None,
    hardest: int = 0,
) -> TwoSteps:
    """The ranking model over ``columns`` of the rows (default: all), in two steps (:class:`TwoSteps`:
    rows → P(right first answer)), each a logistic regression (:func:`~tracebot.matcher.logistic.logistic`).

    First a score learned from within-text comparisons: for each text with a right candidate, the right
    row minus each wrong one, labelled 1, with no intercept (the objective of adding each negated,
    labelled 0: fitted once with C doubled). The answer is chosen
    among a text's candidates, and a pointwise fit spends itself on what sets texts apart (a long log's
    candidates all score high, a chat line's all low) rather than on which candidate wins within one.
    Then a pointwise logistic regression over that score and the text's own features (:data:`PER_TEXT`)
    on every row, silence and ``no_match`` texts included, turns it into a probability; it cannot change
    the order within a text. On the six development sets (``kb eval --cv 5 --cv-kb-only``) the two steps
    ordered two more texts right than one pointwise regression, and as the confidence model they made
    seven more right answers confident at the same false positives (README, "The ranking model").

    With ``hardest``, a text's right candidate is compared only with the ``hardest`` wrong ones that a
    pointwise regression (the previous model) scores highest: the first answer is decided among the close
    candidates, and comparisons with candidates far below teach little about those (three more texts
    ordered right on the six sets, none lost on any; as the confidence model: two more false positives)."""
    x = np.vstack(xs)
    if columns is not None:
        x = x[:, columns]
    names = [FEATURES[i] for i in (range(len(FEATURES)) if columns is None else columns)]
    weight = [BLIND_WEIGHT if s.blind else 1.0 for s in samples]
    weights = np.concatenate([np.full(len(y), w) for y, w in zip(ys, weight, strict=True)])
    if hardest:
        with _one_blas_thread():
            closeness = x @ logistic(x, np.concatenate(ys), weights)[0]
    diffs, pair_weights = [], []
    start = 0
    for y, w in zip(ys, weight, strict=True):
        rows_, start = x[start : start + len(y)], start + len(y)
        if len(y) < 2 or y.sum() != 1:
            continue
        right = int(np.argmax(y))
        wrong = np.delete(np.arange(len(y)), right)
        if hardest:
            wrong = wrong[np.argsort(-closeness[start - len(y) : start][wrong], kind="stable")[:hardest]]
        diffs.append(rows_[right] - rows_[wrong])
        pair_weights.append(np.full(len(wrong), w))
    direction = np.zeros(x.shape[1])
    if diffs:
        d, dw = np.vstack(diffs), np.concatenate(pair_weights)
        # each comparison once, labelled 1, with C doubled: without an intercept a row (d, 1) and its
        # mirror (-d, 0) have the same loss, so the mirrored rows (scikit-learn refuses a single class)
        # only doubled every weight, which is the penalty halved; half the rows to fit
        with _one_blas_thread():
            direction = logistic(d, np.ones(len(d)), dw, c=2.0, intercept=False)[0]
    per_text = np.array([i for i, f in enumerate(names) if f in PER_TEXT], dtype=np.int64)
    step = TwoSteps(direction, per_text, np.zeros(1 + len(per_text)), 0.0)
    with _one_blas_thread():
        step.coef, step.intercept = logistic(step.project(x), np.concatenate(ys), weights)
    return step


@dataclass
class TwoSteps:
    """:func:`_fit`'s ranking model: a row's comparison score (``x @ direction``) and its per-text
    features, weighed by the second regression (``coef``, ``intercept``)."""

    direction: np.ndarray
    per_text: np.ndarray
    coef: np.ndarray
    intercept: float

    def project(self, x: np.ndarray) -> np.ndarray:
        """A row's comparison score, then its per-text features (the second step reads these)."""
        return np.column_stack([x @ self.direction, x[:, self.per_text]])

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """P(right first answer) of each row."""
        return expit(self.project(x) @ self.coef + self.intercept)

    def linear(self) -> tuple[np.ndarray, float]:
        """The two steps as one linear function's coefficients and intercept (what the model keeps):
        ``a · (x @ direction) + b · x[per_text] + c``."""
        coef = self.coef[0] * self.direction
        coef[self.per_text] += self.coef[1:]
        return coef.astype(np.float64), float(self.intercept)


def _one_blas_thread():
    # One BLAS thread: the solver's products are small (rows × ~30 features), and OpenBLAS's threads
    # spin-wait for each other; on a busy 2-core machine that made each fit ~100x slower (0.4 s, not 4 ms).
    return _blas().limit(limits=1, user_api="blas")


@cache
def _blas() -> ThreadpoolController:
    # found once: finding the loaded BLAS libraries (reading the process's memory map) took ~4 ms at
    # each of training's 15 regressions, on the training helper's critical path
    return ThreadpoolController()


def _words(e: Entry) -> str:
    text = " ".join([e.title, e.summary, e.cause, *e.anchors, *e.exemplars, *e.examples_match]).lower()
    # One string, not a set: a thousand entries' sets were ~120,000 strings to unpickle on every start.
    # Each distinct word is cut at its last dot once (an entry's examples repeat most of their words).
    return f" {' '.join(sorted({w.rsplit('.', 1)[-1] for w in set(text.replace(':', ' ').split())}))} "


_ASKS, _STRONG, _PHRASE = (FEATURES.index(f) for f in ("asks", "strong", "phrase"))


def _calibrate(samples: list[Sample], xs: list[np.ndarray], ys: list[np.ndarray]) -> tuple[float, np.ndarray, dict]:
    """Out-of-fold first answers of the confidence model (the features without naive Bayes) on the training
    texts → the lowest probability at which they were right at least TARGET_PRECISION of the time (kept
    within POINT_RANGE), and the first answers to texts that do not ask and have no exact evidence for that
    answer, with its phrase score (:attr:`RankingModel.statements`: those ``core._finish`` caps below the
    threshold a text is judged by, whichever it is, are the ones whose phrase is below it)."""
    strat = [int(s.gold >= 0) + 2 * int(s.only >= 0) for s in samples]
    # Folds by entry: a text and its blind twin, and an entry's other texts, never sit on both sides, so
    # the out-of-fold answers are as unseen as a new paste.
    firsts: list[tuple[float, bool]] = []  # (probability of the first answer, it is right)
    unasked: list[tuple[float, bool, float]] = []  # the same and its phrase, for texts that do not ask, without evidence
    for fit_on, test in group_folds(strat, [s.group for s in samples], 5, SEED):
        conf = _fit([xs[i] for i in fit_on], [ys[i] for i in fit_on], [samples[i] for i in fit_on], CONFIDENCE_COLUMNS)
        # The confidence model's own first answers: calibrating on the full model's (right more often)
        # lowered the point until questions about a version or a memory reading were confident. The
        # fold's texts go in one call (one call per text was a third of training at 1,000 entries).
        probs = conf.probabilities(np.vstack([xs[i] for i in test])[:, CONFIDENCE_COLUMNS])
        ends = np.cumsum([len(xs[i]) for i in test])
        for i, qs in zip(test, np.split(probs, ends[:-1]), strict=True):
            j = int(np.argmax(qs))
            q = qs[j]
            # a no_match answered by its entry is wrong; otherwise the first answer is right when it is gold
            firsts.append((float(q), samples[i].only < 0 and bool(ys[i][j])))
            row = xs[i][j]
            if not row[_ASKS] and not row[_STRONG]:
                unasked.append((*firsts[-1], float(row[_PHRASE])))
    best, sure = precision_point(firsts, TARGET_PRECISION, 1.0)
    positives = max(1, sum(1 for s in samples if s.gold >= 0))
    top1 = sum(ok for _, ok in firsts) / positives
    report = {"oof_first_right": round(top1, 4), "oof_confident_right": round(sure / positives, 4), "p_confident": round(best, 4)}
    point = min(max(best, POINT_RANGE[0]), POINT_RANGE[1])
    return point, np.array(unasked, dtype=np.float64).reshape(-1, 3), report
