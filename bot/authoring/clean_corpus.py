"""Refuse entries that would answer on healthy jobs.

``tests/clean/`` holds logs of normal training, SLURM and SageMaker runs. An entry that confidently
matches a large share of them would reply to people whose jobs are fine, so ``kb lint`` refuses it and
shows the clean lines it matched. (A single clean match is the clean-corpus test's business, with its
list of known false positives; this check stops the broad patterns a contribution should never bring.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tracebot.config import REPO_ROOT
from tracebot.knowledge.entry import Entry
from tracebot.knowledge.loader import KnowledgeBase, LoadError
from tracebot.matcher import Matcher

DEFAULT_CLEAN_DIR = REPO_ROOT / "tests" / "clean"
MAX_SHARE = 0.2  # an entry may confidently match at most this share of the clean logs
SHOW_LINES = 5
LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz")


@dataclass(frozen=True)
class CleanHit:
    file: Path
    line_no: int | None
    line: str
    signature: str
    kind: str


def clean_logs(clean_dir: Path) -> list[Path]:
    if not clean_dir.is_dir():
        return []
    return sorted(p for p in clean_dir.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES))


def clean_hits(matcher: Matcher, logs: list[Path]) -> dict[str, list[CleanHit]]:
    """Per entry id, the first confident hit in every clean log it matches."""
    hits: dict[str, list[CleanHit]] = {}
    for log in logs:
        for m in matcher.diagnose_file(log).confident:
            hits.setdefault(m.entry_id, []).append(CleanHit(log, m.line_no, m.line, m.signature, m.kind))
    return hits


def _signature_line(entry: Entry, kind: str, signature: str) -> int:
    kinds = {"anchor": "anchors", "regex": "regex", "exemplar": "exemplars", "phrase": "phrases"}
    values = getattr(entry, kinds.get(kind, ""), None) or []
    if signature in values:
        return entry.line_of(f"recognise.{kinds[kind]}.{values.index(signature)}")
    return entry.line_of("recognise")


def clean_corpus_problems(
    kb: KnowledgeBase, matcher: Matcher, clean_dir: Path = DEFAULT_CLEAN_DIR, max_share: float = MAX_SHARE
) -> list[LoadError]:
    """One error per entry that confidently matches more than ``max_share`` of the clean logs."""
    logs = clean_logs(clean_dir)
    if not logs:
        return []
    problems = []
    for entry_id, found in clean_hits(matcher, logs).items():
        share = len(found) / len(logs)
        if share <= max_share:
            continue
        entry = kb.get(entry_id)
        if entry is None:
            continue
        shown = [
            f"{h.file.relative_to(clean_dir) if h.file.is_relative_to(clean_dir) else h.file}"
            f":{h.line_no or '?'}: {h.line.strip()[:160]}"
            for h in found[:SHOW_LINES]
        ]
        first = found[0]
        problems.append(
            LoadError(
                str(entry.path or entry.id),
                _signature_line(entry, first.kind, first.signature),
                f"{entry_id} matches {len(found)} of {len(logs)} clean logs ({share:.0%}; the limit is "
                f"{max_share:.0%}): it would answer on healthy jobs. Make its {first.kind} "
                f"{first.signature!r} more specific. Clean lines it matched: " + " | ".join(shown),
            )
        )
    return problems


def lint_check(clean_dir: Path = DEFAULT_CLEAN_DIR) -> Callable[[KnowledgeBase, Matcher], list[LoadError]]:
    """The check in the shape ``tracebot.authoring.lint.EXTRA_CHECKS`` takes."""

    def check(kb: KnowledgeBase, matcher: Matcher) -> list[LoadError]:
        return clean_corpus_problems(kb, matcher, clean_dir)

    return check
