"""The matcher: text in, known problems out, best first, each with a calibrated score.

Pipeline: lines (all of a short text, trigger-selected ones of a long log) → clean (prefixes off,
rank/host kept) → dedupe by masked form → strong evidence (RE2 set of anchors + regexes) and, for
error-looking lines, fuzzy evidence (rapidfuzz against exemplars sharing a rare token) → per-entry
aggregate (first line, occurrences, ranks, hosts) → prose evidence (character n-grams vs phrases) for
short texts → ranking: confident first, line evidence before prose, root causes before symptoms, then
strong before fuzzy, explicit priority, score, and first appearance.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from tracebot.config import DEFAULT_THRESHOLD, MODEL_ENV, env_switch
from tracebot.knowledge.entry import Entry
from tracebot.knowledge.loader import KnowledgeBase
from tracebot.matcher import ModelUnavailable, platforms
from tracebot.matcher.asking import asks
from tracebot.matcher.explains import explained_by
from tracebot.matcher.facts import read_facts
from tracebot.matcher.index import CompiledKB, looks_like_error, tokens
from tracebot.matcher.normalize import CleanLine, LocalRanks, clean, mask, to_text
from tracebot.matcher.ranking import MAX_MATCHES, rank
from tracebot.matcher.scan import ScanStats, bytes_stream, candidate_lines, open_log, text_lines
from tracebot.matcher.suggest import UNFILLED, fill, placeholders
from tracebot.matcher.triage import (
    TRIAGE_MIN_LINES,
    Seen,
    Triager,
    attach_triage,
    first_failure_leads,
    line_time,
    logged_as_warning,
)
from tracebot.notes import note
from tracebot.result import Diagnosis, Match, Source

if TYPE_CHECKING:
    from tracebot.knowledge.silence import Silence
    from tracebot.matcher.model import Evidence, Gather, RankingModel
    from tracebot.matcher.training import Prepared

STRONG_SCORE = 92.0
FULL_SCAN_CHARS = 256 * 1024  # texts up to this size get every line examined
STREAM_DEADLINE_S = 60.0  # reading one long text or file stops after this (notes say so)
PROSE_MAX_CHARS = 4000  # phrase (prose) matching only on texts a person would type
MAX_UNIQUE_LINES = 20_000  # fuzzy scoring stops after this many distinct candidate lines
MAX_EXEMPLARS_PER_LINE = 64
MIN_REPORTED_SCORE = 45.0
KEEP_LINE_NOS = 20
KEEP_RANKS = 200

# Fuzzy and prose scores are mapped so that the same threshold means the same confidence for every kind
# of evidence: a raw partial_ratio of 90 maps to 75 (the default threshold), 100 to 100.
FUZZY_FLOOR = 60.0
PHRASE_FULL = 0.62  # blended n-gram similarity that maps to 100
MIN_SHARED_WORDS = 2  # words (or CJK bigrams) a text must share with a phrase for a confident prose match
UNSURE_PHRASE_SCORE = 60.0
# The ranking model scores texts a person pastes (not long logs, whose order the line rules decide), and
# reads at most this much of them: the prose and the lines with evidence or error words.
MODEL_MAX_LINES = 200
MODEL_TEXT_CHARS = 4000
MODEL_MIN_PROBABILITY = 0.02
# When the model's likeliest answer is reported and no answer is confident, its next likeliest are reported
# too, down to this probability, up to MODEL_GUESSES in all: a paste nobody is sure about still gets its
# closest guesses (never confident).
MODEL_GUESSES = 3
MODEL_GUESS_PROBABILITY = 0.002


@dataclass
class _Hit:
    entry: int
    kind: str
    signature: str
    score: float


@dataclass
class _Agg:
    score: float = 0.0
    kind: str = ""
    signature: str = ""
    line: str = ""
    first_line: int | None = None  # first line with the strongest evidence (line_nos has them all)
    occurrences: int = 0
    line_nos: list[int] = field(default_factory=list)
    ranks: dict[str, None] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)
    phrase: float = 0.0  # best prose phrase score, kept apart for the ranking model
    # earliest timestamp on a line with strong evidence of a root cause: (format, seconds), see line_time
    first_when: tuple[int, float] | None = None
    untimed: bool = False  # some of those lines had no timestamp
    warned: bool | None = None  # every one of those lines was logged as a warning (None: no such line)


def entry_match(entry: Entry, *, score: float = 100.0, confident: bool = True, kind: str = "",
                signature: str = "", filled: dict[str, str] | None = None, lang: str = "en") -> Match:
    """A :class:`Match` that carries what ``entry`` says (summary, cause, fix, sources, suggestions), in
    ``lang`` where the entry has a translation. A suggestion whose placeholder the text did not fill
    (``/trace job <jobid>`` with no job id in sight) is left out: it cannot be run as shown."""
    said = entry.text_in(lang)
    suggestions = [fill(t, filled or {}) for t in entry.trace]
    return Match(
        entry_id=entry.id,
        title=said["title"],
        score=score,
        confident=confident,
        role=entry.role,
        kind=kind,
        signature=signature,
        priority=entry.priority,
        summary=said["summary"],
        cause=said["cause"],
        fix=list(said["fix"]),
        sources=[_source(s) for s in entry.sources],
        suggestions=[s for s in suggestions if not UNFILLED.search(s)],
        lang=lang,
    )


def _told_where_cut(found: Diagnosis, stream: object) -> Diagnosis:
    """``found`` with the note of a gzip unpacked short (its limit, its deadline, its damage), which the
    stream knows and the line reader does not: read in part, it must not read as the whole log."""
    stopped = getattr(stream, "stopped", "")
    if stopped:
        found.truncated = True
        found.notes.append(stopped)
    return found


def _source(cited: dict[str, str]) -> Source:
    if "doc" in cited:
        return Source(title=cited.get("title") or cited["doc"], url=cited.get("url"), section=cited.get("section"))
    return Source(title=cited.get("title") or cited.get("url", ""), url=cited.get("url"))


def train_ranking_model(
    entries: list[Entry],
    silence: list[Silence],
    key: str | None,
    gather: Gather,
    *,
    leave_out_sources=(),
    leave_out_examples=(),
    extra=(),
    prepared: Prepared | None = None,
    prewrite: bool | None = None,
) -> RankingModel:
    """:meth:`Matcher.train_model` of a matcher over ``entries`` and ``silence`` whose model key is ``key``
    (``None``: computed here) and whose evidence is ``gather``'s; what the training helper calls when its
    parent hands it the evidence, so that it need not load the matcher
    (:mod:`tracebot.matcher.train_child`)."""
    from tracebot.knowledge.cache import prewrite as write_early
    from tracebot.matcher.features import text_info
    from tracebot.matcher.keys import model_key
    from tracebot.matcher.model import load_or_train
    from tracebot.matcher.trainer import core_free

    full = not (leave_out_sources or leave_out_examples or extra)
    key = (key or model_key(entries, silence)) if full else ""

    def train() -> RankingModel:
        from tracebot.matcher.training import prepare
        from tracebot.matcher.training import train as fit  # SciPy: only when training

        p = prepared or prepare(
            entries, leave_out_sources=leave_out_sources, leave_out_examples=leave_out_examples, extra=extra, silence=silence
        )
        if full and (prewrite if prewrite is not None else core_free()):
            # the model's TF-IDF spaces (~100 MB at 1,000 entries) are final now: a thread writes them
            # into its cache file while the training rows, the regressions and the calibration are computed
            write_early("model", key, p.model)
        return fit(entries, gather, text_info, prepared=p)

    return load_or_train(entries, train, key, silence) if full else train()


class Matcher:
    """``model``: a trained :class:`RankingModel`, ``True`` (train or load from the cache), ``False``
    (the matcher's own scores only) or ``None`` (``$TRACEBOT_MODEL``: on unless off, false, no or 0).
    ``index``: ``kb`` already compiled (from the matcher cache, :mod:`tracebot.matcher.loading`).

    The model's modules are imported only when a model is used: a matcher without one starts faster."""

    def __init__(
        self,
        kb: KnowledgeBase,
        threshold: float = DEFAULT_THRESHOLD,
        model: RankingModel | bool | None = None,
        index: CompiledKB | None = None,
    ):
        self.kb = kb
        self.threshold = threshold
        self.index = index if index is not None else CompiledKB(kb)
        if model is None:
            model = env_switch(MODEL_ENV, True)
        if model is True:
            model = self.train_model() if self.can_train else None
        self._model: RankingModel | None = model or None
        self._pending: Callable[[Matcher], RankingModel | None] | None = None
        self._model_lock = threading.Lock()

    @property
    def model(self) -> RankingModel | None:
        """The ranking model; a deferred one (:meth:`defer_model`) is made here, on first use (failing:
        :class:`~tracebot.matcher.ModelUnavailable`, at every use until it is made)."""
        if self._pending is not None:
            with self._model_lock:  # two threads asking at once train it once
                if self._pending is not None:
                    # set only once made: a failure is raised again at the next use, never silently
                    # turned into answers without the model; raised as one the CLI explains (the
                    # caller is answering a text, and a traceback from SciPy says nothing of that)
                    try:
                        self._model = self._pending(self)
                    except Exception as exc:
                        raise ModelUnavailable(
                            f"the ranking model could not be trained ({type(exc).__name__}: {exc}); "
                            "TRACEBOT_MODEL=0 answers without it"
                        ) from exc
                    self._pending = None
        return self._model

    @model.setter
    def model(self, value: RankingModel | None) -> None:
        self._model, self._pending = value, None

    @property
    def model_pending(self) -> bool:
        """Whether the model is deferred and not made yet (a long log never makes it)."""
        return self._pending is not None

    def defer_model(self, make: Callable[[Matcher], RankingModel | None]) -> None:
        """Make the model with ``make(self)`` when a text first needs it, not now: only a text a person
        pastes (under :data:`MODEL_MAX_LINES` lines) is ranked by it, so ``tracebot diagnose big.log``
        with nothing cached does not train a model it will not read. ``make`` is handed the matcher
        rather than holding it: a matcher that refers to itself would outlive its last use until a
        garbage collection, and with it whatever ``make`` holds (an idle helper process)."""
        self._model, self._pending = None, make

    @property
    def silence(self) -> list[Silence]:
        """The knowledge base's silence texts: texts no entry may answer (training reads them)."""
        return list(getattr(self.index.kb, "silence", []))

    @property
    def can_train(self) -> bool:
        """Whether the knowledge base is large enough for a ranking model."""
        from tracebot.matcher.model import MIN_ENTRIES

        return len(self.index.entries) >= MIN_ENTRIES

    def train_model(
        self,
        *,
        leave_out_sources=(),
        leave_out_examples=(),
        extra=(),
        prepared: Prepared | None = None,
        gather: Gather | None = None,
        prewrite: bool | None = None,
    ) -> RankingModel:
        """The ranking model for this knowledge base (see :mod:`tracebot.matcher.model`); with nothing
        left out and nothing extra, from the cache when this knowledge base was trained before.
        ``prepared``: :func:`tracebot.matcher.training.prepare` of these entries and silence texts, done
        already (the training helper's); ``gather``: the training texts' evidence, in place of
        :meth:`evidence_of` (the training helper's, handed over by its parent); ``prewrite``: write the
        model's TF-IDF spaces into its cache file on a thread while the rest is trained (``None``: when a
        core is idle; on a busy machine the thread only slows the training it overlaps)."""
        return train_ranking_model(
            self.index.entries,
            self.silence,
            self.index.model_key,
            gather or self.evidence_of,
            leave_out_sources=leave_out_sources,
            leave_out_examples=leave_out_examples,
            extra=extra,
            prepared=prepared,
            prewrite=prewrite,
        )

    # ---- public API -------------------------------------------------------------------------------
    @property
    def trigger(self):
        """The compiled pattern that picks candidate lines out of a log (for :func:`scan_log`)."""
        return self.index.trigger

    def diagnose(self, text: str | bytes, *, threshold: float | None = None) -> Diagnosis:
        """Diagnose a pasted text (or bytes). Long texts are scanned like logs."""
        if isinstance(text, bytes):
            if len(text) > FULL_SCAN_CHARS or text[:2] == b"\x1f\x8b":
                stream = bytes_stream(text)
                found = self._diagnose_stream(
                    stream, len(text), deadline=time.monotonic() + STREAM_DEADLINE_S, threshold=threshold
                )
                return _told_where_cut(found, stream)
            text = to_text(text)
        stats = ScanStats()
        if len(text) > FULL_SCAN_CHARS:
            data = text.encode("utf-8", errors="replace")
            return self._diagnose_stream(
                bytes_stream(data), len(data), deadline=time.monotonic() + STREAM_DEADLINE_S, threshold=threshold
            )
        triager = Triager() if text.count("\n") >= TRIAGE_MIN_LINES - 1 else None
        aggs, prose = self._gather(text, stats, triager)
        return self._finish(aggs, stats, prose, threshold, named=text, triager=triager)

    def diagnose_file(
        self,
        path: Path | str,
        progress=None,
        *,
        deadline_s: float | None = STREAM_DEADLINE_S,
        threshold: float | None = None,
        max_inflated_bytes: int | None = None,
        deadline: float | None = None,
    ) -> Diagnosis:
        """Diagnose a log file of any size: gzip is unpacked (at most ``max_inflated_bytes``), binary junk
        tolerated, memory bounded; reading stops ``deadline_s`` from now or at ``deadline``, whichever
        comes first, and the diagnosis's notes say what was not read."""
        path = Path(path)
        end = time.monotonic() + deadline_s if deadline_s else None
        if deadline is not None:
            end = deadline if end is None else min(end, deadline)
        stream, size = open_log(path, max_inflated=max_inflated_bytes, deadline=end)
        with stream:
            data = b""
            if size <= FULL_SCAN_CHARS:
                data = stream.read(FULL_SCAN_CHARS + 1)
            if size <= FULL_SCAN_CHARS and len(data) <= FULL_SCAN_CHARS:
                found = self.diagnose(data, threshold=threshold)
            else:
                if data:
                    stream.seek(0)
                found = self._diagnose_stream(stream, size, progress=progress, deadline=end, threshold=threshold)
        return _told_where_cut(found, stream)

    def search(self, query: str, limit: int = 5) -> list[Match]:
        """Entries whose title, summary, tags, phrases or anchors use a word of ``query`` or a form of one
        (for ``kb search`` and ``/trace kb``), most alike first. Sharing letters is not relating: "flux"
        shares n-grams with "fluent" and "influx" and listed two unrelated entries; an entry is listed when
        it shares a word that is not a function word, or one word is the other's start ("hanging" and
        "hang", "timeouts" and "timeout"), or a long word is a slip of the other ("dataloder"). An empty list
        says nothing matched."""
        index = self.index.search_index
        sims = index.similarities(query)
        wanted = {w for w in _SEARCH_WORD.findall(query.lower()) if w not in _UNSEARCHED and len(w) > 1}
        cjk = bool(_CJK_CHAR.search(query))
        ranked = sorted(
            ((i, s) for i, s in sims.items()
             if (cjk and s[2]) or _relates(wanted, set(_SEARCH_WORD.findall(index.documents[i].lower())))),
            key=lambda kv: -(kv[1][0] + kv[1][1]),
        )
        out = []
        for i, (cos, cover, _shared) in ranked[:limit]:
            score = round(min(100.0, 100 * (cos + cover) / 2 / PHRASE_FULL), 1)
            out.append(entry_match(self.index.entries[i], score=score, confident=False, kind="search"))
        return out

    # ---- internals --------------------------------------------------------------------------------
    def _diagnose_stream(self, stream, size, *, progress=None, deadline=None, threshold=None) -> Diagnosis:
        stats = ScanStats()
        lines = candidate_lines(
            stream, self.index.trigger, stats, size_hint=size, deadline=deadline, progress=progress
        )
        triager = Triager()
        aggs = self._score_lines(lines, triager)
        return self._finish(aggs, stats, "", threshold, triager=triager)

    def _gather(
        self, text: str, stats: ScanStats, triager: Triager | None = None, *, phrases: bool = True
    ) -> tuple[dict[int, _Agg], str]:
        """Line and prose evidence per entry for a text held in memory, and its prose part (``phrases``:
        also compare the prose with the entries' phrases)."""
        aggs = self._score_lines(text_lines(text, stats), triager)
        prose = prose_lines(text) if len(text) <= PROSE_MAX_CHARS else ""
        if prose and phrases:
            for ei, h in self._prose_hits(prose).items():
                a = aggs.get(ei)
                if a is None:
                    aggs[ei] = _Agg(score=h.score, kind="phrase", signature=h.signature, phrase=h.score)
                else:
                    a.phrase = h.score
                    if a.kind == "exemplar" and h.score > a.score:
                        # Prose agreeing with a fuzzy line is extra evidence, not a replacement for the line.
                        a.score = h.score
        return aggs, prose

    def evidence_of(self, text: str, *, phrases: bool = True) -> tuple[dict[int, Evidence], str]:
        """The model's evidence for ``text`` (for training); without ``phrases`` the prose is not compared
        with the entries' phrases, which changes no anchor or regex evidence."""
        aggs, prose = self._gather(text, ScanStats(), phrases=phrases)
        return _evidence(aggs), prose

    def _score_lines(self, lines, triager: Triager | None = None) -> dict[int, _Agg]:
        seen: dict[str, list[_Hit]] = {}
        aggs: dict[int, _Agg] = {}
        cleaned: dict[str, tuple[CleanLine, str]] = {}
        local_ranks = LocalRanks()  # torchrun's per-node ranks placed in the job, as the log tells
        roots = self.index.root_causes
        record = ""  # the last line that was not indented: the message an indented line continues
        for no, raw in lines:
            if raw[:1] not in (" ", "\t"):
                record = raw
            # A long log repeats its lines (the same warning from every rank, every step): clean and mask
            # each distinct line once.
            got = cleaned.get(raw)
            if got is None:
                cl = clean(raw)
                got = (cl, mask(cl.text) if cl.text else "")
                if len(cleaned) < MAX_UNIQUE_LINES:
                    cleaned[raw] = got
            cl, key = got
            if cl.host is not None or cl.task is not None:
                cl = local_ranks.resolve(cl)
            if triager is not None:
                triager.add(no, raw, cl, key)
            if not cl.text:
                continue
            hits = seen.get(key)
            if hits is None:
                hits = self._line_hits(cl.text, key, fuzzy=len(seen) < MAX_UNIQUE_LINES)
                seen[key] = hits
            when: tuple[int, float] | None = None
            when_read = False  # the timestamp is read once per line, and only for a root cause's evidence
            for h in hits:
                a = aggs.get(h.entry)
                if a is None:
                    a = aggs[h.entry] = _Agg()
                if h.entry in roots and h.kind != "exemplar" and triager is not None:
                    # when each root cause first showed, across ranks: the earliest one is ranked first
                    if not when_read:
                        when, when_read = line_time(raw), True
                    if when is None:
                        a.untimed = True
                    elif a.first_when is None or when < a.first_when:
                        a.first_when = when
                    if a.warned is not False:
                        a.warned = logged_as_warning(raw, record)
                if h.score > a.score:
                    # The reported line is the first occurrence of the strongest evidence, so the line
                    # shown, its number and the signature that fired always belong together.
                    a.score, a.kind, a.signature = h.score, h.kind, h.signature
                    a.first_line, a.line = no, raw.strip()[:500]
                a.occurrences += 1
                if len(a.line_nos) < KEEP_LINE_NOS:
                    a.line_nos.append(no)
                if cl.rank is not None and len(a.ranks) < KEEP_RANKS:
                    a.ranks[cl.rank] = None
                if cl.host is not None and len(a.hosts) < KEEP_RANKS:
                    a.hosts[cl.host] = None
        return aggs

    def _line_hits(self, text: str, masked: str, *, fuzzy: bool) -> list[_Hit]:
        idx = self.index
        best: dict[int, _Hit] = {}
        for s in idx.strong_hits(text):
            if s.entry not in best and not idx.vetoed(s.entry, text):
                best[s.entry] = _Hit(s.entry, s.kind, s.signature, STRONG_SCORE)
        if fuzzy and idx.exemplars and _scorable(masked) and looks_like_error(masked):
            cands: dict[int, None] = {}
            for t in tokens(masked):
                for xi in idx.token_index.get(t, ()):
                    cands[xi] = None
                    if len(cands) >= MAX_EXEMPLARS_PER_LINE:
                        break
            for xi in cands:
                x = idx.exemplars[xi]
                if x.entry in best and best[x.entry].kind != "exemplar":
                    continue
                raw = _fuzzy(x.masked, masked)
                score = (raw - FUZZY_FLOOR) / (100 - FUZZY_FLOOR) * 100
                if score >= MIN_REPORTED_SCORE and not idx.vetoed(x.entry, text):
                    prev = best.get(x.entry)
                    if prev is None or score > prev.score:
                        best[x.entry] = _Hit(x.entry, "exemplar", x.text, round(score, 1))
        return list(best.values())

    def _prose_hits(self, text: str) -> dict[int, _Hit]:
        idx = self.index
        out: dict[int, _Hit] = {}
        if len(text.strip()) < 12:
            return out
        for pi, (cos, cover, shared) in idx.phrases.similarities(text).items():
            blended = 0.5 * cos + 0.5 * cover
            score = min(100.0, 100.0 * blended / PHRASE_FULL)
            if shared < MIN_SHARED_WORDS:
                # One rare identifier in common (GPU_NUM_DEVICES, num_workers) is not a question about it.
                score = min(score, UNSURE_PHRASE_SCORE)
            ei = idx.phrase_owner[pi]
            if (
                score >= MIN_REPORTED_SCORE
                and (ei not in out or score > out[ei].score)
                and not idx.vetoed(ei, text)
            ):
                out[ei] = _Hit(ei, "phrase", idx.phrase_texts[pi], round(score, 1))
        return out

    def _facts(self, line: str, ei: int, read: dict[tuple[str, tuple[str, ...]], dict[str, str]]) -> dict[str, str]:
        """What ``line`` says by entry ``ei``'s readers (:func:`read_facts`), read once per line and list of
        readers in ``read``: a line that fired twenty entries with the same regexes (copies of one entry) was
        cleaned and searched by some twenty patterns twenty times."""
        key = (line, self.index.reader_sources(ei))
        found = read.get(key)
        if found is None:
            found = read[key] = read_facts(clean(line).text, self.index.readers(ei))
        return dict(found)

    def _finish(
        self,
        aggs: dict[int, _Agg],
        stats: ScanStats,
        prose: str,
        threshold: float | None,
        named: str = "",
        triager: Triager | None = None,
    ) -> Diagnosis:
        """Turn per-entry evidence into matches in final order. ``named`` is the text whose job ids,
        node names and training-job names fill the entries' ``/trace`` suggestions (for a streamed log,
        the matched lines)."""
        requested = self.threshold if threshold is None else threshold
        thr = requested
        idx = self.index
        notes = list(stats.notes)
        _drop_off_platform_evidence(aggs, idx.entries, named or prose)
        silenced = ""  # the rule that holds every answer back, for Match.withheld
        if prose and stats.lines_total <= 3 and _RESOLVED.search(prose) and not asks(prose) and not _thanks_a_report(named or prose, prose):
            # "CUDA OOM is gone after halving the batch, thanks!" names the error but needs no answer.
            thr, silenced = max(thr, 101.0), "thanks"
            notes.append(note("thanks"))
        elif named and describes_change(named) and not asks(prose):
            # "Handle Slurm's OUT_OF_MEMORY job state", "LGTM — we now catch OutOfMemoryError": a pull
            # request, a commit or a review names the error it handles; nobody in the thread has it.
            thr, silenced = max(thr, 101.0), "change"
            notes.append(note("change"))
        probs: dict[int, float] = {}
        sure: dict[int, float] = {}  # the confidence model's probabilities (RankingModel.answer)
        guesses: set[int] = set()  # below MODEL_MIN_PROBABILITY, kept as closest guesses
        asked = stated = shown = chat = False
        # the model last: a long log must not make a deferred model it will not read
        if named and stats.lines_total < MODEL_MAX_LINES and self.model is not None:
            from tracebot.matcher.features import text_info

            model_text = _model_text(named, prose, aggs)
            info = text_info(model_text, prose)
            asked = info.asks
            chat = info.kind == "chat" and not info.has_error
            # "fixed, thanks" over a pasted error is too short to be prose, so only this rule reads it
            shown = info.shows_error and not _says_it_is_over(named)
            # a person stating a problem, not a thank-you or a reply saying what fixed it
            stated = info.states and not _RESOLVED.search(prose) and not _FIX_REPORT.search(prose)
            probs, sure = self.model.answer(model_text, info, _evidence(aggs))
            # (exact evidence is reported and confident whatever its probability: never a mere guess)
            guesses = _guesses(probs) - {ei for ei, a in aggs.items() if a.kind in ("anchor", "regex")}
            for ei, p in probs.items():
                if ei not in aggs and (p >= MODEL_MIN_PROBABILITY or ei in guesses):
                    aggs[ei] = _Agg(kind="similar", signature=idx.entries[ei].title)
        # where such texts' first answers were right often enough among those capped at the threshold asked for
        statement_point = self.model.statement_point(requested) if probs and (stated or shown) else 2.0
        kept = {
            ei: a
            for ei, a in aggs.items()
            # exact evidence is always reported, however unlikely the model finds it
            if a.kind in ("anchor", "regex")
            or (probs.get(ei, 0.0) >= MODEL_MIN_PROBABILITY or ei in guesses if probs else a.score >= MIN_REPORTED_SCORE)
        }
        filled = placeholders(named or "\n".join(a.line for a in kept.values()))
        lang = language(prose)
        matches: list[Match] = []
        read: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}  # (line, readers) -> its facts
        for ei, a in kept.items():
            score = self.model.score(sure[ei]) if probs else round(a.score, 1)
            if probs and a.kind in ("anchor", "regex"):
                # The model reorders and adds answers; it never talks exact evidence out of confidence.
                score = max(score, round(a.score, 1))
            unprompted = bool(probs) and not asked and (a.kind == "similar" or (a.kind == "phrase" and a.score < requested))
            held = _withheld(silenced, ei in guesses, score, thr, unprompted, stated or shown)
            if probs and (ei in guesses or unprompted and not ((stated or shown) and sure[ei] >= statement_point)):
                # Resembling an entry's text is not evidence in a log or an error line: healthy
                # nvidia-smi output reads like the ECC entry, a launch command with NCCL_* settings like the
                # network hang, DeepSpeed's OVERFLOW info line like its loss scale at minimum, a reply saying
                # what fixed it like the entry it fixed. Only a text that asks something may be answered on
                # wording alone, or one that states a problem in a person's words (an issue's title and
                # body; a title of a dozen words alone is a chat line, no statement) when the confidence
                # model is at least as sure as where such texts' first answers were right 99.5 % of the time
                # out of fold (RankingModel.statement_point, at the threshold asked for); elsewhere a phrase must be close enough to be
                # confident by itself. (A closest guess below MODEL_MIN_PROBABILITY is never confident.)
                score = min(score, thr - 0.1, requested - 0.1)
            m = entry_match(idx.entries[ei], score=score, confident=score >= thr, kind=a.kind,
                            signature=a.signature, filled=filled, lang=lang)
            m.probability = round(probs[ei], 4) if probs else None
            m.withheld = "" if m.confident else held
            m.line, m.line_no, m.occurrences, m.line_nos = a.line, a.first_line, a.occurrences, a.line_nos
            m.ranks, m.hosts = list(a.ranks), list(a.hosts)
            m.facts = self._facts(a.line, ei, read) if a.line else {}
            matches.append(m)
        if guesses and any(m.confident for m in matches):
            # guesses are for a paste nobody is sure about; beside a confident answer they are noise
            gone = {idx.entries[ei].id for ei in guesses}
            matches = [m for m in matches if m.entry_id not in gone]
            kept = {ei: a for ei, a in kept.items() if ei not in guesses}
        _same_line_relations(matches, {e.id: e.related for e in (idx.entries[ei] for ei in kept)})
        explained_by(matches, idx.explainer.explains_ids, (idx.entries[ei].id for ei, a in kept.items() if a.kind in ("anchor", "regex")))
        if probs:
            _root_causes_outrank_symptoms(matches, thr)
            for m in matches:
                m.withheld = "" if m.confident else m.withheld
        diagnosis = Diagnosis(
            matches=rank(matches),
            threshold=requested,
            lines_total=stats.lines_total,
            lines_scored=sum(a.occurrences for a in aggs.values()),
            bytes_read=stats.bytes_read,
            truncated=stats.truncated,
            notes=notes,
            lang=lang,
            chat=chat,
        )
        if triager is not None:
            attach_triage(diagnosis, triager)
            ff = diagnosis.first_failure
            if ff is not None and ff.entry_id is None and not ff.cascade:
                # its line beyond the first few where an entry fired (a node's log appended late): read it again
                text = clean(ff.text).text
                fired = {idx.entries[ei].id for ei in idx.fired(text)}
                ff.entry_id = next((m.entry_id for m in diagnosis.matches if m.entry_id in fired), None)
            first_failure_leads(diagnosis, {
                idx.entries[ei].id: Seen(a.line_nos[0] if a.line_nos else a.first_line,
                                         None if a.untimed else a.first_when, a.warned is True)
                for ei, a in kept.items()}, thr)
            if not probs:
                # A log (not a paste the model ranks): among root causes with exact evidence, the first
                # failure's entry, then the earliest.
                _order_root_causes(matches, {idx.entries[ei].id: a for ei, a in kept.items()},
                                   ff.entry_id if ff is not None else None)
            diagnosis.matches = rank(matches)
        diagnosis.matches = diagnosis.matches[:MAX_MATCHES]
        return diagnosis


_LOGLIKE = re.compile(
    r"""^\s*(?:[\w.]*(?:Error|Exception|Warning)\b|Traceback\b|File\s"|frame\s\#|at\s[\w.$]+\(|[|+=$#]|>>>
      |(?:~|\.{1,2})?/[\w.@+-]+/\S*|[A-Za-z]:\\\S+|\S+\.(?:py|cc|cpp|cu|h):\d+
      |import\s+[\w.]+\s*$|from\s+[\w.]+\s+import\s|def\s+\w+\(|class\s+\w+[(:]|export\s+\w+=
      |(?:sudo|srun|sbatch|salloc|python3?|torchrun|deepspeed|accelerate|mpirun)\s+(?:-|\S+\.py\b|\S*/|launch\b)
      |[\w.]+\(.*\)\s*;?$|[\w.]+(?:\[[^\]]*\])?\s+=\s+\S|[\w.]+\[[^\]]*\]\s*=
      |(?:[A-Z_][A-Z0-9_]*=\S*[\s,;]*)+$)
    |\b(?:INFO|DEBUG|TRACE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b\s*[:\]|-]
    # hints PyTorch prints under every CUDA error: sentences, but a tool's, and never the cause
    |CUDA\ kernel\ errors\ might\ be\ asynchronously|consider\ passing\ CUDA_LAUNCH_BLOCKING|TORCH_USE_CUDA_DSA""",
    re.VERBOSE,
)
_RESOLVED = re.compile(
    r"\b(?:thanks|thank you|thx|solved|resolved|fixed (?:it|now)|works now|working now)\b"
    r"|ありがと|解決|直りました|なおりました|出なくなりました|治りました|謝謝|谢谢|已解决",
    re.IGNORECASE,
)
# A reply saying what fixed it in words _RESOLVED leaves out ("Replacing GPU 3 fixed the hang", "fixed by
# …", "the error went away"): never a statement of a problem. Only the statement test reads it; the
# thank-you rule keeps _RESOLVED alone (a wider rule there would silence short texts it answers today).
_FIX_REPORT = re.compile(
    r"\bfixed\b|\b(?:went|goes|has gone) away\b|\b(?:is|are) gone\b"
    r"|\bno longer (?:happens|occurs|appears|shows up|hangs|crashes|fails)\b",
    re.IGNORECASE,
)


# The courtesy words of _RESOLVED: alone they close a reply ("thanks, will try") as often as they open a
# report ("Thanks for sharing the code. I get this error:").
_THANKS = re.compile(r"\b(?:thanks|thank you|thx)\b|ありがと|謝謝|谢谢", re.IGNORECASE)


def _thanks_a_report(text: str, prose: str) -> bool:
    """Whether the only resolution ``prose`` speaks of is a thank-you and ``text`` carries an error on a line
    of its own: courtesy around a report ("Thanks a lot for sharing your code. I encountered this issue" over
    "RuntimeError: No CUDA GPUs are available"), not a problem closed ("fixed it by halving the batch, thanks"
    over the error it fixed says fixed; "thanks, it was a hardware failure" pastes nothing)."""
    from tracebot.matcher.features import shows_error

    if _RESOLVED.search(_THANKS.sub(" ", prose)) or _FIX_REPORT.search(prose):
        return False
    return any(not _RESOLVED.search(x) and shows_error(x) for x in text.splitlines() if x.strip())


def _says_it_is_over(text: str) -> bool:
    """Whether the lines of ``text`` that state no error (the words a person put around a paste: "fixed,
    thanks", "works now") say the error is over, as the thank-you and statement rules read prose."""
    from tracebot.matcher.features import shows_error

    if not (_RESOLVED.search(text) or _FIX_REPORT.search(text)):
        # both match within a line, so not in some of the lines when not in all of them: no line is scored
        return False
    around = "\n".join(x for x in text.splitlines() if not shows_error(x))
    return bool(_RESOLVED.search(around) or _FIX_REPORT.search(around))


# A text that describes a change to code rather than a problem: a pull request's or commit's title (an
# imperative change verb first, "Add …", "Handle …", "Support …", or a conventional-commit or bracketed tag,
# "fix(xid): …", "[bugfix] …"), a pull request's description ("This PR …", a template's "Description of
# changes"), a commit trailer, a review's approval. Slack unfurls a pasted pull-request link into its title
# and description; they name the error they handle, so they read like the entry that describes it.
_TAGS = r"""\A(?:\[[^\]\n]{1,40}\]\s*)*"""
_TYPE = r"""(?:feat|feature|fix|bugfix|hotfix|change|chore|docs?|refactor|perf|test|build|ci)(?:\([^)\n]{0,60}\))?!?:\s"""
_CHANGE_TITLE = re.compile(
    _TAGS + r"""
    (?:""" + _TYPE + r"""
      |(?:add|adds|handle|handles|support|supports|enable|enables|implement|implements|allow|allows|introduce
         |introduces|expose|exposes|document|documents|remove|removes|fix|fixes|bump|revert|deprecate|rename
         |improve|improves)\s
      |this\s+(?:pr|pull\s+request|commit|patch)\b
      |lgtm\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# (a closing trailer is a line of its own: "Fixes #4521 was merged but our eval still fails …" is a report)
_CHANGE_MARK = re.compile(
    r"description\s+of\s+changes|^\s*signed-off-by:|^\s*(?:fixes|closes|resolves)\s+(?:#\d+|https?://\S+)[.,;]?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


# A failure told in words, or something that does not do what it should, or a log's failure (an exception's
# name, a traceback, a fatal or aborted line, a signal): a change's body that says so is a report of the bug
# the change fixes, and a paste whose first line only looks like a title ("test: …", "Add …") goes on to one.
_FAILURE_WORDS = re.compile(
    r"\b(?:hang|hangs|hung|hanging|stuck|freezes|froze|crash\w*|fail\w*|\w*error\w*|\w*exception|timed? ?out|killed"
    r"|oom|out of memory|deadlock\w*|segfault|broken|cannot|never|traceback|fatal|abort\w*|core dumped"
    r"|sig(?:segv|abrt|kill|term|bus)"
    r"|(?:does|do|did|is|are|was|were|can|could|will|would)(?:n't|n’t| not))\b"
    # the same told in Japanese (no word boundaries there): an error, falls over, stops, fails, hangs
    r"|エラー|落ち|止ま|失敗|固ま|ハング|タイムアウト|動かな|できな",
    re.IGNORECASE,
)
# A first line that starts like a change's title but tells of someone's problem: what they still see, what
# broke, a fix that did not work, said by them or asked about ("Enable gradient checkpointing, still CUDA out of memory",
# "This commit broke our training: …", "Fixes from the thread didn't work"). A change's title names the error
# it handles, so the first line's failure words alone cannot tell (_FAILURE_WORDS reads what follows it).
_REPORT_WORDS = re.compile(
    r"\b(?:still|anymore|broke|(?:is|are|was|were|got) broken|not working"
    r"|(?:does|do|did)(?:n't|n’t| not) (?:help|work|fix|change|solve)\w*|my|me|i'm|i've|(?-i:I)(?!/)"
    # a question typed without its question mark: "Enable P2P inside the container, is there a way"
    r"|how (?:do|can|should|would) (?:i|we|you)|is there (?:a|any) way|why (?:does|do|did|is|are|was|would)"
    r"|what (?:does|do|did|causes|is causing))\b",
    re.IGNORECASE,
)


_FIRST_LINE = re.compile(r"\S.*")
# What a title's bracketed tags and conventional-commit type leave of it (what a CI step's or a make target's
# name leaves of a log line: "build: nvcc fatal : …", "test: OSError: …").
_TAGGED = re.compile(_TAGS + "(?:" + _TYPE + r")?\s*", re.IGNORECASE | re.VERBOSE)
# An error line as a program prints it, from its start: an exception ("RuntimeError: CUDA error: …", "OSError:
# [Errno 28] …"), a tool's own "fatal :" or "error:" after its name ("nvcc fatal   : Unsupported gpu
# architecture", "gcc: error:", "ld: fatal error:"), a logger's error level with its separator ("CRITICAL:root:",
# "ERROR - ", "FATAL | "; a capitalised word alone is a title's emphasis: "fix: CRITICAL NCCL timeout on …"), a
# traceback. A title names the error its change handles in a sentence ("retry after CUDA out of memory"), never
# starts with its line.
_ERROR_LINE = re.compile(
    r"""(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Failure|Fault)(?::\s|\s*$)
    |(?i:(?:[\w.+/-]+:?\s+)?(?:fatal\s+error|fatal|error|panic)\s*:)
    |(?:ERROR|FATAL|CRITICAL)(?:\s*[:|\]]|\s+-{1,2}\s)|Traceback\s\(most\srecent\scall\slast\)""",
    re.VERBOSE,
)


def describes_change(text: str) -> bool:
    """Whether ``text`` describes a change (a pull request, a commit, a review) rather than a problem someone
    has: it carries a pull-request template's or a commit's marks (:data:`_CHANGE_MARK`), or its first line
    reads as a change's title (:data:`_CHANGE_TITLE`), not as someone's problem (:data:`_REPORT_WORDS`) nor,
    after its tags, as a program's error line (:data:`_ERROR_LINE`), and nothing after it tells of a failure
    (:data:`_FAILURE_WORDS`). A pull request
    whose body goes on to describe the bug it fixes ("… will hang when training with uneven data") is read
    as that bug's report."""
    if _CHANGE_MARK.search(text):
        return True
    first = _FIRST_LINE.search(text)  # not every line split: a paste may be a long log
    if first is None or not _CHANGE_TITLE.match(line := first.group()):
        return False
    rest = line[_TAGGED.match(line).end() :]  # type: ignore[union-attr]
    return (
        not _REPORT_WORDS.search(line)
        # a tool's error line under a step's name is a log, its failure words the error itself (a change's
        # verb first, "Fix error: …", is a title that quotes one)
        and (bool(_CHANGE_TITLE.match(rest)) or not _ERROR_LINE.match(rest))
        and not _FAILURE_WORDS.search(text, first.end())
    )


_FUNCTION_WORDS_TEXT = (
    "an the is are was were be been my our we it its this that these there how why what when where which who "
    "does do did doesn don can cannot could should would will won not no to of in on at for with without from "
    "by after before during while and or but if so only just any some all keeps keep get gets got"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
_WORDS = re.compile(r"[^\W\d_]{2,}")
_SEARCH_WORD = re.compile(r"[a-z][a-z0-9_]*")
# words of a request that say nothing of what it is about ("how to fix", "any help with this error")
_ASKING_WORDS = frozenset(["fix", "fixed", "fixing", "solve", "solved", "help", "please", "issue", "issues", "problem", "problems", "error", "errors"])
_UNSEARCHED = _FUNCTION_WORDS | _ASKING_WORDS


def _relates(wanted: set[str], words: set[str]) -> bool:
    """Whether an entry's ``words`` hold a word of a search, or a form of one: the shorter (of 4 letters or
    more) starting the longer, or two words of 6 letters or more that differ by a slip (rapidfuzz ratio ≥ 85)."""
    for q in wanted:
        if q in words:
            return True
        for w in words:
            short, long_ = (q, w) if len(q) <= len(w) else (w, q)
            if len(short) >= 4 and long_.startswith(short):
                return True
            if len(short) >= 6 and fuzz.ratio(q, w) >= 85:
                return True
    return False
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")


def language(prose: str) -> str:
    """``ja`` when the words around the log (the question, the remarks) are Japanese: kana, which
    Chinese text lacks. Log lines are left out of ``prose``, so an English log pasted with a Japanese
    question is answered in Japanese."""
    return "ja" if len(_KANA.findall(prose)) >= 3 else "en"


def prose_lines(text: str) -> str:
    """The lines of ``text`` a person wrote (questions, descriptions), without log and config lines.

    Phrases describe how people ask; comparing them with log lines (``NCCL_SOCKET_IFNAME set by
    environment``) or settings (``MASTER_PORT=29500``) would make the shared variable name decide.
    """
    keep = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        cl = clean(stripped)
        if cl.prefixed:
            continue  # had a timestamp / rank / host prefix: a log line
        if _LOGLIKE.search(cl.text):
            continue
        if len(_CJK_CHAR.findall(cl.text)) >= 4:
            keep.append(cl.text)
            continue
        words = _WORDS.findall(cl.text)
        # A sentence has function words; table headers, column rows and identifiers do not.
        if len(words) >= 3 and any(w.lower() in _FUNCTION_WORDS for w in words):
            keep.append(cl.text)
    return "\n".join(keep)


def _drop_off_platform_evidence(aggs: dict[int, _Agg], entries: list[Entry], text: str) -> None:
    """An entry's anchor or regex is no evidence in a text that names another operating system than the only
    one its failure exists on (``platforms.contradicted``): macOS's shell reports any SIGKILL as "Killed: 9",
    exit status 137, which on Linux is the kernel's OOM killer's mark."""
    marked = [ei for ei, a in aggs.items() if a.kind in ("anchor", "regex") and entries[ei].platform]
    if marked:
        found = platforms.mentioned(text)
        for ei in marked:
            if platforms.contradicted(entries[ei].platform, found):
                del aggs[ei]


def _root_causes_outrank_symptoms(matches: list[Match], thr: float) -> None:
    """Exact evidence (anchor, regex) of a root cause is worth at least what any symptom in the same text
    is worth: a watchdog timeout on seven ranks must not be posted instead of the OOM on the eighth."""
    symptoms = [m for m in matches if m.role == "symptom"]
    if not symptoms:
        return
    top = max(symptoms, key=lambda m: m.score)
    for m in matches:
        if m.role == "root-cause" and m.kind in ("anchor", "regex") and m.score < top.score:
            m.score, m.probability, m.confident = top.score, top.probability, top.confident or m.score >= thr


def _order_root_causes(matches: list[Match], aggs: dict[str, _Agg], first: str | None) -> None:
    """``Match.order`` for each root cause with exact evidence: 0 for the entry of the log's first failure
    (``first``), then the one that showed first. By timestamp when every such line carries one of the
    same format (ranks' clocks, node-by-node concatenation), else by line, as the triager orders failures."""
    exact = [m for m in matches if m.role == "root-cause" and m.kind in ("anchor", "regex") and m.line_no is not None]
    whens = [aggs[m.entry_id].first_when for m in exact]
    timed = all(w is not None for w in whens) and not any(aggs[m.entry_id].untimed for m in exact) \
        and len({w[0] for w in whens if w is not None}) == 1
    keys = {m.entry_id: (m.entry_id != first, (w[1] if timed and w else 0.0), m.line_no or 0)
            for m, w in zip(exact, whens, strict=True)}
    distinct = sorted(set(keys.values()))
    for m in exact:
        m.order = distinct.index(keys[m.entry_id])


def _same_line_relations(matches: list[Match], related: dict[str, list[str]]) -> None:
    """A related entry that matched the very line another did is what that line says about it: an OOM
    naming another process's memory points to gpu-zombie-process."""
    by_line: dict[int, list[Match]] = {}
    for m in matches:
        if m.line_no is not None:
            by_line.setdefault(m.line_no, []).append(m)
    for m in matches:
        m.see_also = [o.entry_id for o in by_line.get(m.line_no, []) if o is not m and o.entry_id in related[m.entry_id]] \
            if m.line_no is not None else []


def _evidence(aggs: dict[int, _Agg]) -> dict[int, Evidence]:
    from tracebot.matcher.model import Evidence

    return {
        ei: Evidence(
            strong=a.kind in ("anchor", "regex"),
            fuzzy=a.score if a.kind == "exemplar" else 0.0,
            phrase=a.phrase,
            lines=a.occurrences,
        )
        for ei, a in aggs.items()
    }


def _withheld(silenced: str, guess: bool, score: float, thr: float, unprompted: bool, statement: bool) -> str:
    """Why an answer that is not confident is not (:attr:`Match.withheld`), read before the cap on answers from
    wording alone lowers its score: the thank-you or change rule (``silenced``) holds every answer of the text; a
    closest guess is never confident; an answer scored below the threshold is below the confidence point (the
    ranking model's, or for a log the line rules' score); one at or above it is held by the cap, at the statement
    point when the text states a problem or shows an error, else because it asks nothing."""
    if silenced:
        return silenced
    if guess:
        return "guess"
    if score < thr:
        return "below point"
    return ("statement point" if statement else "not asked") if unprompted else "below point"


def _guesses(probs: dict[int, float]) -> set[int]:
    """The entries below MODEL_MIN_PROBABILITY kept as closest guesses: when the likeliest answer is
    reported, the next likeliest up to MODEL_GUESSES in all, down to MODEL_GUESS_PROBABILITY (dropped
    again in ``_finish`` when an answer is confident). The right answer to a paste unlike every entry's
    text is often second or third with a small probability."""
    if not probs or max(probs.values()) < MODEL_MIN_PROBABILITY:
        return set()
    top = sorted(probs, key=lambda ei: -probs[ei])[:MODEL_GUESSES]
    return {ei for ei in top if MODEL_GUESS_PROBABILITY <= probs[ei] < MODEL_MIN_PROBABILITY}


def _model_text(text: str, prose: str, aggs: dict[int, _Agg]) -> str:
    """What the model reads: a short text whole; of a longer one, its prose, the lines with evidence and
    the error-looking lines, up to MODEL_TEXT_CHARS."""
    if len(text) <= MODEL_TEXT_CHARS:
        return text
    keep: dict[str, None] = dict.fromkeys(x for x in prose.splitlines() if x)
    keep.update(dict.fromkeys(a.line for a in sorted(aggs.values(), key=lambda a: a.first_line or 0) if a.line))
    for line in text.splitlines():
        if sum(map(len, keep)) >= MODEL_TEXT_CHARS:
            break
        if looks_like_error(line):
            keep[clean(line).text] = None
    return "\n".join(keep)[:MODEL_TEXT_CHARS]


def _fuzzy(exemplar: str, line: str) -> float:
    if len(exemplar) <= len(line):
        # The line may carry more context than the exemplar; a short exemplar is weaker evidence.
        raw = fuzz.partial_ratio(exemplar, line)
        return raw * min(1.0, (len(exemplar) / 30) ** 0.25)
    return fuzz.ratio(exemplar, line) * min(1.0, (len(line) / 30) ** 0.25)


def _scorable(masked: str) -> bool:
    # Traceback frames and C++ frame dumps carry paths, not the error.
    return not (masked.startswith('file "') or masked.startswith("frame #") or len(masked) < 8)
