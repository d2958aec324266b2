"""``tracebot kb lint``: everything wrong with the knowledge base, each problem with file and line.

Schema, ids, pattern safety (loader), then every entry's own examples run through the real matcher:
entries' ``platform`` names, ``examples.match`` must come out first and confident, ``examples.no_match`` must not be a confident
match for the entry, ``examples.todo_match`` must still fail (strict xfail: a fixed gap must be moved),
and no text of ``silence.yaml`` may get a confident answer from any entry.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tracebot.authoring import clean_corpus
from tracebot.knowledge.entry import Entry
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base
from tracebot.knowledge.silence import SILENCE_FILE
from tracebot.matcher import Matcher, platforms

TODO_MARK = "TODO"

# Checks for contributed entries beyond what loading checks (a regex's shape is the loader's, so a running
# bot's reload refuses what lint refuses): entries that match a large share of the clean corpus of healthy
# logs. (kb, matcher) -> problems.
EXTRA_CHECKS: list[Callable[[KnowledgeBase, Matcher], list[LoadError]]] = [
    clean_corpus.lint_check(),
]


@dataclass(frozen=True)
class ExampleResult:
    entry: str
    kind: str  # match | no_match | todo_match
    index: int
    ok: bool
    detail: str


def _where(entry: Entry) -> str:
    return str(entry.path) if entry.path else entry.id


def check_example(matcher: Matcher, entry: Entry, kind: str, index: int, text: str) -> ExampleResult:
    d = matcher.diagnose(text)
    best = d.best
    if kind in ("match", "todo_match"):
        ok = best is not None and best.entry_id == entry.id and best.confident
        if ok:
            detail = f"matched by {best.kind} {best.signature!r} (score {best.score})"
        elif best is None:
            detail = "nothing matched"
        else:
            mine = next((m for m in d.matches if m.entry_id == entry.id), None)
            detail = f"first was {best.entry_id} ({best.score}{'' if best.confident else ', not confident'})"
            detail += f"; {entry.id} scored {mine.score}" if mine else f"; {entry.id} did not match"
    else:
        mine = next((m for m in d.matches if m.entry_id == entry.id and m.confident), None)
        ok = mine is None
        detail = "" if ok else f"confidently matched by {mine.kind} {mine.signature!r} (score {mine.score})"
    return ExampleResult(entry.id, kind, index, ok, detail)


def _match_hint(entry: Entry, result: ExampleResult) -> str:
    """What an author does about an example their entry does not win (``result.detail`` says who did)."""
    if result.detail.startswith("first was ") and not result.detail.startswith(f"first was {entry.id} "):
        other = result.detail.split()[2]
        return (f" (if {other} is the answer an on-call engineer wants first, the example belongs there; "
                f"else make {other}'s pattern more specific, or quote this error line in one of {entry.id}'s)")
    return f" (quote its error line in an anchor or regex of {entry.id}, or keep prose under todo_match)"


def example_problems(kb: KnowledgeBase, matcher: Matcher) -> list[LoadError]:
    problems: list[LoadError] = []
    for e in kb.entries:
        for kind, texts in (("match", e.examples_match), ("no_match", e.examples_no_match), ("todo_match", e.examples_todo)):
            for i, text in enumerate(texts):
                r = check_example(matcher, e, kind, i, text)
                line = e.line_of(f"examples.{kind}.{i}")
                if kind == "match" and not r.ok:
                    problems.append(LoadError(_where(e), line, f"examples.match[{i}] does not make {e.id} win: {r.detail}"
                                                               f"{_match_hint(e, r)}"))
                elif kind == "no_match" and not r.ok:
                    problems.append(LoadError(_where(e), line, f"examples.no_match[{i}] {r.detail}: make it say what "
                                                               "this near miss does not, or drop the near miss if "
                                                               f"{e.id} is its answer"))
                elif kind == "todo_match" and r.ok:
                    problems.append(
                        LoadError(_where(e), line, f"examples.todo_match[{i}] now passes ({r.detail}): move it to match")
                    )
    return problems


def silence_problems(kb: KnowledgeBase, matcher: Matcher, only: str | None = None) -> list[LoadError]:
    """Each text of ``silence.yaml`` that some entry (``only`` that one, when given) answers confidently (it
    must get no answer at all)."""
    where = str(kb.root / SILENCE_FILE) if kb.root else SILENCE_FILE
    problems = []
    for s in kb.silence:
        best = matcher.diagnose(s.text).best
        if best is not None and best.confident and only in (None, best.entry_id):
            problems.append(
                LoadError(where, s.line, f"silence text ({s.kind}) confidently answered by {best.entry_id} "
                                         f"({best.kind} {best.signature!r}, score {best.score})")
            )
    return problems


HELD_OUT_FOLDS = 5


def held_out_warnings(kb: KnowledgeBase, matcher: Matcher, folds: int = HELD_OUT_FOLDS) -> list[LoadError]:
    """Each ``examples.match`` answered by a ranking model trained without it (the examples split into
    ``folds`` groups, one retraining per group). An example that wins only when the model has seen it
    proves little about texts like it: a warning, not a failure."""
    if matcher.model is None:
        return []
    examples = [(e, i, x) for e in kb.entries for i, x in enumerate(e.examples_match)]
    warnings: list[LoadError] = []
    for fold in range(folds):
        held = [(e, i, x) for n, (e, i, x) in enumerate(examples) if n % folds == fold]
        fold_matcher = copy.copy(matcher)
        fold_matcher.model = matcher.train_model(leave_out_examples={x for _, _, x in held})
        for e, i, x in held:
            r = check_example(fold_matcher, e, "match", i, x)
            if not r.ok:
                warnings.append(
                    LoadError(
                        _where(e),
                        e.line_of(f"examples.match.{i}"),
                        f"warning: examples.match[{i}] does not make {e.id} win when left out of training: {r.detail}",
                    )
                )
    return warnings


def _same_text(text: str) -> str:
    return " ".join(text.split()).casefold()


def silence_collisions(kb: KnowledgeBase) -> list[LoadError]:
    """Each ``examples.match`` or ``todo_match`` that is also a text of ``silence.yaml``, at the example's line:
    one text cannot be an entry's answer and no answer at all. The model trains on both, and without this the
    only sign was the silence text's own line, in a file the author of the entry never touched."""
    silent = {_same_text(s.text): s.line for s in kb.silence}
    out = []
    for e in kb.entries:
        for kind, texts in (("match", e.examples_match), ("todo_match", e.examples_todo)):
            for i, text in enumerate(texts):
                line = silent.get(_same_text(text))
                if line is not None:
                    out.append(LoadError(_where(e), e.line_of(f"examples.{kind}.{i}"),
                                         f"examples.{kind}[{i}] is also a silence text ({SILENCE_FILE}:{line}), a text "
                                         f"no entry may answer: keep it in one of the two places"))
    return out


def todo_problems(kb: KnowledgeBase) -> list[LoadError]:
    out = []
    for e in kb.entries:
        for key, value in (("cause", e.cause), ("summary", e.summary), ("title", e.title)):
            if TODO_MARK in value:
                out.append(LoadError(_where(e), e.line_of(key), f"'{key}' still has a TODO"))
        for i, step in enumerate(e.fix):
            if TODO_MARK in step:
                out.append(LoadError(_where(e), e.line_of(f"fix.{i}"), "a fix step still has a TODO"))
        for i, s in enumerate(e.sources):
            if any(TODO_MARK in v for v in s.values()):
                out.append(LoadError(_where(e), e.line_of(f"sources.{i}"), "a source still has a TODO"))
        for kind in ("anchors", "regex", "exemplars", "phrases"):
            for i, value in enumerate(getattr(e, kind)):
                if TODO_MARK in value:
                    out.append(LoadError(_where(e), e.line_of(f"recognise.{kind}.{i}"), f"recognise.{kind} still has a TODO"))
        for kind, texts in (("match", e.examples_match), ("no_match", e.examples_no_match)):
            for i, value in enumerate(texts):
                if value.strip().startswith(TODO_MARK):
                    out.append(LoadError(_where(e), e.line_of(f"examples.{kind}.{i}"), f"examples.{kind} still has a TODO"))
    # in the file's order, as `kb new` lists them: an author works down the file
    return sorted(out, key=lambda p: (p.path, p.line or 0))


def platform_problems(kb: KnowledgeBase) -> list[LoadError]:
    """An entry's ``platform`` must be one the matcher knows the words of (``platforms.yaml``): an unknown
    name is never mentioned, so the entry would count as off-platform for every text."""
    known = set(platforms.patterns())
    return [
        LoadError(_where(e), e.line_of("platform"), f"platform {name!r} is not in platforms.yaml ({', '.join(sorted(known))})")
        for e in kb.entries
        for name in e.platform
        if name not in known
    ]


def entry_problems(matcher: Matcher, entry: Entry) -> list[LoadError]:
    """What :func:`lint` says about ``entry`` alone, in the knowledge base ``matcher`` was built over (which
    holds it): its TODOs and platform, whether it answers on healthy logs, its own examples and the silence
    texts it answers. For a draft checked against the live knowledge base without copying it (Save as
    knowledge); what the draft does to the other entries' examples is :func:`~tracebot.authoring.compare`'s."""
    one = KnowledgeBase([entry], matcher.kb.root, matcher.kb.silence)
    problems = todo_problems(one) + platform_problems(one) + silence_collisions(one)
    for check in EXTRA_CHECKS:
        problems += [p for p in check(matcher.kb, matcher) if p.path == _where(entry)]
    return problems + example_problems(one, matcher) + silence_problems(matcher.kb, matcher, only=entry.id)


def lint(root: Path, *, examples: bool = True) -> tuple[KnowledgeBase, list[LoadError]]:
    kb, problems = load_knowledge_base(root)
    problems = list(problems) + todo_problems(kb) + platform_problems(kb) + silence_collisions(kb)
    if kb.entries:
        matcher = Matcher(kb)
        # An entry's own faults first: a refused regex steals other entries' examples and silence texts,
        # and its one line must not come after dozens of lines about the entries it wronged.
        for check in EXTRA_CHECKS:
            problems += check(kb, matcher)
        if examples:
            problems += example_problems(kb, matcher) + silence_problems(kb, matcher)
    return kb, problems
