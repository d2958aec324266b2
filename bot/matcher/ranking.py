"""The one order of matches, and the one way to put several diagnoses together.

Every view shows matches in the order :func:`rank` gives; a text with attachments, or a plugin that
matched a log excerpt, a job record and py-spy stacks, is combined here rather than re-sorted by
whoever holds the pieces.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from tracebot.result import Diagnosis, Match

if TYPE_CHECKING:
    from tracebot.knowledge.loader import KnowledgeBase

MAX_MATCHES = 10
_LINE_KINDS = ("anchor", "regex", "exemplar")
_STRONG_KINDS = ("anchor", "regex")


def rank_key(m: Match) -> tuple:
    """Confident first; evidence from log lines before prose; among line evidence, root causes before
    symptoms, exact (anchor/regex) before fuzzy, then (in a log) the root cause that showed first
    (``Match.order``), then the author's explicit priority; among prose, the closer question wins; ties
    go to what appeared first. A paste the ranking model scored keeps the model's order."""
    first = m.line_no if m.line_no is not None else 1 << 62
    if m.probability is not None:
        # Ranked by the model: exact evidence of a root cause still comes first, then the likelier answer.
        exact_root = m.kind in _STRONG_KINDS and m.role == "root-cause"
        return (not m.confident, 0, not exact_root, -m.probability, -m.priority, first)
    if m.kind in _LINE_KINDS:
        strong = m.kind != "exemplar"
        return (
            not m.confident,
            0,
            m.role != "root-cause",
            not strong,
            # in a log, the root cause that showed first (by time across ranks) wins; priority breaks ties
            m.order if m.order is not None else 1 << 30,
            -m.priority if strong else -m.score,
            -m.score if strong else -m.priority,
            first,
        )
    return (not m.confident, 1, -m.score, m.role != "root-cause", -m.priority, first)


def rank(matches: Iterable[Match]) -> list[Match]:
    return explainers_first(sorted(matches, key=rank_key))


def explainers_first(ranked: list[Match]) -> list[Match]:
    """``ranked`` with each match's explainers (``Match.explained_by``: the watchdog's teardown lines around a
    ``ncclRemoteError`` are explained by it) moved to just before it, in their own order; everything else
    keeps its place. A confident match is never put after an explainer that is not confident: the threshold
    decides what is posted, the relation only orders it. The relation has no cycles
    (:mod:`tracebot.matcher.explains`); ``above`` guards against one all the same."""
    if not any(m.explained_by for m in ranked):
        return ranked
    rest = list(ranked)
    out: list[Match] = []

    def place(m: Match, above: frozenset[str]) -> None:
        for o in [o for o in rest if o.entry_id in m.explained_by and o.entry_id not in above
                  and (o.confident or not m.confident)]:
            if o in rest:
                place(o, above | {m.entry_id})
        rest.remove(m)
        out.append(m)

    while rest:
        place(rest[0], frozenset())
    return out


def in_language(d: Diagnosis, kb: KnowledgeBase | None) -> Diagnosis:
    """``d`` with every match's title, summary, cause and fix in ``d.lang`` where its entry (``kb.get``)
    has them. Each part :func:`combine` joins was matched in its own language: a Japanese question with an
    English log attached took the question's language for tracebot's labels, and the log's English for
    what the entries say."""
    for i, m in enumerate(d.matches):
        entry = kb.get(m.entry_id) if m.lang != d.lang and kb is not None else None
        if entry is not None:
            said = entry.text_in(d.lang)
            d.matches[i] = replace(m, title=said["title"], summary=said["summary"], cause=said["cause"],
                                   fix=list(said["fix"]), lang=d.lang)
    return d


def combine(
    diagnoses: Iterable[Diagnosis], *, confident_only: bool = False, max_matches: int = MAX_MATCHES
) -> Diagnosis:
    """One diagnosis from several (a message and its files; a plugin's log, record and stacks).

    An entry found in more than one keeps its strongest evidence (the higher score; on a tie, the
    earlier part). Counts add up; notes are kept in order, each once. The language is the first
    non-English part's; the triage (first failure, cascade, silent ranks) is the first part's that has
    one: line numbers of different texts do not compare, and the message comes before its files.
    """
    parts = list(diagnoses)
    best: dict[str, Match] = {}
    notes: dict[str, None] = {}
    # The reader's language is the message's (the first part); a log's triage comes from the part that has one.
    triaged = next((d for d in parts if d.first_failure is not None or d.silent_ranks), None)
    for diag in parts:
        for m in diag.matches:
            if confident_only and not m.confident:
                continue
            if m.order is not None and diag is not triaged:
                m = replace(m, order=None)  # which root cause showed first is known within one text only
            if m.entry_id not in best or m.score > best[m.entry_id].score:
                best[m.entry_id] = m
        notes.update(dict.fromkeys(diag.notes))
    return Diagnosis(
        lang=next((d.lang for d in parts if d.lang != "en"), "en"),
        first_failure=triaged.first_failure if triaged else None,
        cascade_counts=list(triaged.cascade_counts) if triaged else [],
        cascade_follows=triaged.cascade_follows if triaged else False,
        silent_ranks=list(triaged.silent_ranks) if triaged else [],
        silent_hosts=dict(triaged.silent_hosts) if triaged else {},
        lagging_ranks=list(triaged.lagging_ranks) if triaged else [],
        matches=rank(best.values())[:max_matches],
        threshold=parts[0].threshold if parts else Diagnosis().threshold,
        lines_total=sum(d.lines_total for d in parts),
        lines_scored=sum(d.lines_scored for d in parts),
        bytes_read=sum(d.bytes_read for d in parts),
        truncated=any(d.truncated for d in parts),
        notes=list(notes),
        chat=bool(parts) and all(d.chat for d in parts),  # a log attached to "thanks!" is read and answered
    )
