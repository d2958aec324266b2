"""``tracebot kb eval --compare BASE_REF``: what a change to ``knowledge/`` does to the corpus.

The knowledge directory is materialised as it was at ``BASE_REF`` (``git archive`` into a temporary
directory; git is run with argv lists and timeouts, the ref is validated first), both versions answer
the same corpus, and the comparison lists the figures before and after, every case whose answer
changed, and every entry example that another entry now wins ("steals"). A change that makes the
corpus worse is reported as such; the CLI exits non-zero for it.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tracebot.authoring.evaluate import Case, CaseResult, EvalReport, evaluate
from tracebot.config import DEFAULT_THRESHOLD
from tracebot.knowledge.loader import KnowledgeBase, LoadError, load_knowledge_base
from tracebot.matcher import Matcher

GIT_TIMEOUT_S = 60
MAX_ARCHIVE_BYTES = 64 << 20
# Branch / tag names, hashes and revision suffixes (HEAD~1, main^, origin/main). No leading dash (it
# would read as an option), no whitespace, no ".." ranges, nothing a shell or git would expand.
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/~^-]{0,199}$")


class CompareError(ValueError):
    """The comparison cannot be made (bad ref, not a git checkout, git failed); the message says why."""


@dataclass(frozen=True)
class CaseChange:
    id: str
    expected: str | None
    before: str  # first answer, "(nothing)" or "<id> (not confident)"
    after: str
    verdict: str  # "now right" | "now wrong" | "new false positive" | "false positive gone" | "changed"


@dataclass(frozen=True)
class Steal:
    entry: str
    where: str  # file:line of the example
    index: int
    by: str  # the entry that now comes first, or "(nothing)"


@dataclass
class Comparison:
    base_ref: str
    base_sha: str
    before: EvalReport
    after: EvalReport
    changes: list[CaseChange] = field(default_factory=list)
    steals: list[Steal] = field(default_factory=list)
    base_errors: list[LoadError] = field(default_factory=list)
    head_errors: list[LoadError] = field(default_factory=list)

    @property
    def worse(self) -> list[str]:
        """Why the change makes things worse; empty when it does not."""
        b, a = self.before, self.after
        why = []
        if a.top1 < b.top1:
            why.append(f"top-1 fell from {b.top1:.1%} to {a.top1:.1%}")
        if a.top3 < b.top3:
            why.append(f"top-3 fell from {b.top3:.1%} to {a.top3:.1%}")
        if a.false_positive_rate > b.false_positive_rate:
            why.append(
                f"false positives rose from {b.false_positive_rate:.1%} to {a.false_positive_rate:.1%}"
            )
        if a.confident_wrong > b.confident_wrong:
            why.append(f"confident wrong answers rose from {b.confident_wrong} to {a.confident_wrong}")
        if self.steals:
            n = len(self.steals)
            why.append(f"{n} entry example{'s' if n > 1 else ''} now answered by another entry")
        if self.head_errors and len(self.head_errors) > len(self.base_errors):
            why.append(f"{len(self.head_errors)} knowledge-base problem(s) (was {len(self.base_errors)})")
        return why


def validate_ref(ref: str) -> str:
    if not _REF.match(ref) or ".." in ref or ref.endswith((".", "/", ".lock")):
        raise CompareError(
            f"{ref!r} is not a git ref this command accepts (a branch, tag, commit hash or e.g. HEAD~1)"
        )
    return ref


def _git(args: list[str], cwd: Path, timeout: float = GIT_TIMEOUT_S, env: dict[str, str] | None = None) -> bytes:
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **env} if env else None,
        )
    except FileNotFoundError as exc:
        raise CompareError("git is not installed; --compare needs it") from exc
    except subprocess.TimeoutExpired as exc:
        raise CompareError(f"git {args[0]} took longer than {timeout:.0f}s") from exc
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CompareError(f"git {args[0]} failed: {msg[-1] if msg else f'exit {proc.returncode}'}")
    return proc.stdout


def resolve(ref: str, repo: Path) -> str:
    """The commit hash ``ref`` names in ``repo``."""
    validate_ref(ref)
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], repo)
    except CompareError as exc:
        raise CompareError(f"{ref!r} does not name a commit in {repo} (fetch it first?)") from exc
    return out.decode().strip()


def repo_root(path: Path) -> Path:
    start = path if path.is_dir() else path.parent
    try:
        return Path(_git(["rev-parse", "--show-toplevel"], start).decode().strip())
    except CompareError as exc:
        raise CompareError(f"{path} is not inside a git checkout; --compare needs one") from exc


def materialise(repo: Path, sha: str, rel: str, dest: Path) -> Path:
    """Extract ``rel`` (a directory, repo-relative) as of ``sha`` under ``dest``; return its path there.

    A directory that did not exist at ``sha`` comes back empty (everything in the change is new).
    """
    target = dest / rel
    target.mkdir(parents=True, exist_ok=True)
    if not _git(["ls-tree", "-d", "--name-only", sha, "--", rel], repo).strip():
        return target
    data = _git(["archive", "--format=tar", sha, "--", rel], repo)
    if len(data) > MAX_ARCHIVE_BYTES:
        raise CompareError(f"{rel} at {sha[:10]} is {len(data)} bytes; the limit is {MAX_ARCHIVE_BYTES}")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        # the "data" filter refuses absolute paths, "..", links out of the tree and device files
        tar.extractall(dest, filter="data")
    return target


def _answer(r: CaseResult) -> str:
    if not r.answers:
        return "(nothing)"
    first = r.answers[0]
    return first if first in r.confident else f"{first} (not confident)"


def case_changes(before: EvalReport, after: EvalReport) -> list[CaseChange]:
    old = {r.id: r for r in before.results}
    changes = []
    for r in after.results:
        b = old.get(r.id)
        if b is None or _answer(b) == _answer(r):
            continue
        if r.expected is None and b.confident[:1] == r.confident[:1]:
            continue  # on a case that expects silence only a confident answer is visible to anyone
        if r.expected is None:
            verdict = (
                "new false positive"
                if r.false_positive and not b.false_positive
                else "false positive gone"
                if b.false_positive and not r.false_positive
                else "changed"
            )
        else:
            verdict = (
                "now right" if r.top1 and not b.top1 else "now wrong" if b.top1 and not r.top1 else "changed"
            )
        changes.append(CaseChange(r.id, r.expected, _answer(b), _answer(r), verdict))
    return changes


def _example_winner(matcher: Matcher, text: str) -> str:
    best = matcher.diagnose(text).best
    return best.entry_id if best is not None and best.confident else "(nothing)"


def stolen_examples(
    before_kb: KnowledgeBase, after_kb: KnowledgeBase, before_m: Matcher | None = None, after_m: Matcher | None = None
) -> list[Steal]:
    """Examples (``examples.match``) that their entry won before and another entry wins now, answered by
    ``before_m`` and ``after_m`` (built from the knowledge bases when not given).

    An example of a new entry that an existing entry wins counts too: the new entry would never answer.
    """
    before_m, after_m = before_m or Matcher(before_kb), after_m or Matcher(after_kb)
    steals = []
    for e in after_kb.entries:
        old = before_kb.get(e.id)
        for i, text in enumerate(e.examples_match):
            now = _example_winner(after_m, text)
            if now in (e.id, "(nothing)"):
                continue
            if old is not None and text in old.examples_match and _example_winner(before_m, text) != e.id:
                continue  # it already failed before this change (lint reports it); not this change's doing
            where = f"{e.path}:{e.line_of(f'examples.match.{i}')}"
            steals.append(Steal(e.id, where, i, now))
    return steals


def compare(kb_root: Path, cases: list[Case], base_ref: str, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
    """Run ``cases`` against ``kb_root`` at ``base_ref`` and in the working tree."""
    kb_root = kb_root.resolve()
    repo = repo_root(kb_root)
    sha = resolve(base_ref, repo)
    try:
        rel = kb_root.relative_to(repo.resolve()).as_posix()
    except ValueError as exc:
        raise CompareError(f"{kb_root} is not inside the git checkout {repo}") from exc
    with tempfile.TemporaryDirectory(prefix="tracebot-compare-") as tmp:
        base_dir = materialise(repo, sha, rel, Path(tmp))
        return compare_dirs(base_dir, kb_root, cases, base_ref=base_ref, base_sha=sha, threshold=threshold)


def compare_dirs(
    base_dir: Path,
    kb_dir: Path,
    cases: list[Case],
    *,
    base_ref: str,
    base_sha: str = "",
    threshold: float = DEFAULT_THRESHOLD,
) -> Comparison:
    """Run ``cases`` against two knowledge directories: ``base_dir`` (before) and ``kb_dir`` (after)."""
    before_kb, base_errors = load_knowledge_base(base_dir)
    after_kb, head_errors = load_knowledge_base(kb_dir)
    before_m, after_m = Matcher(before_kb, threshold=threshold), Matcher(after_kb, threshold=threshold)
    return compare_matchers(before_m, after_m, cases, base_ref=base_ref, base_sha=base_sha,
                            errors=(base_errors, head_errors))


def compare_matchers(
    before_m: Matcher,
    after_m: Matcher,
    cases: list[Case],
    *,
    base_ref: str,
    base_sha: str = "",
    errors: tuple[list[LoadError], list[LoadError]] = ([], []),
) -> Comparison:
    """Run ``cases`` against two built matchers (each over its knowledge base, ``matcher.kb``), as
    :func:`compare_dirs` does; ``errors``: each knowledge base's load problems, before and after."""
    before, after = evaluate(before_m, cases), evaluate(after_m, cases)
    return Comparison(
        base_ref,
        base_sha,
        before,
        after,
        case_changes(before, after),
        stolen_examples(before_m.kb, after_m.kb, before_m, after_m),
        *errors,
    )


def _pct(x: float) -> str:
    return f"{x:.1%}"


def format_comparison(c: Comparison) -> str:
    b, a = c.before, c.after

    def row(name: str, x: str, y: str, delta: str) -> str:
        return f"  {name:<24}{x:>12}{y:>12}   {delta}".rstrip()

    def pts(x: float, y: float) -> str:
        return "same" if x == y else f"{(y - x) * 100:+.1f} pts"

    lines = [
        f"knowledge base at {c.base_ref}{f' ({c.base_sha[:10]})' if c.base_sha else ''} -> working tree, "
        f"{a.positives} positive and {a.negatives} negative cases",
        row("", "before", "after", ""),
        row("top-1", _pct(b.top1), _pct(a.top1), pts(b.top1, a.top1)),
        row("top-3", _pct(b.top3), _pct(a.top3), pts(b.top3, a.top3)),
        row(
            "confident top-1",
            _pct(b.confident_top1),
            _pct(a.confident_top1),
            pts(b.confident_top1, a.confident_top1),
        ),
        row(
            "false positives",
            f"{len(b.false_positives)}/{b.negatives}",
            f"{len(a.false_positives)}/{a.negatives}",
            pts(b.false_positive_rate, a.false_positive_rate),
        ),
        row(
            "confident wrong",
            str(b.confident_wrong),
            str(a.confident_wrong),
            f"{a.confident_wrong - b.confident_wrong:+d}",
        ),
    ]
    if c.changes:
        lines.append(f"cases that changed answer ({len(c.changes)}):")
        for ch in c.changes:
            expects = f"expects {ch.expected}" if ch.expected else "expects no answer"
            lines.append(f"  {ch.id} ({expects}): {ch.before} -> {ch.after}   [{ch.verdict}]")
    else:
        lines.append("no case changed answer")
    if c.steals:
        lines.append(f"entry examples now answered by another entry ({len(c.steals)}):")
        lines += [f"  {s.where}: {s.entry} examples.match[{s.index}] now goes to {s.by}" for s in c.steals]
    if c.head_errors:
        lines.append(
            f"knowledge-base problems in the working tree ({len(c.head_errors)}; see `tracebot kb lint`):"
        )
        lines += [f"  {e}" for e in c.head_errors[:10]]
    worse = c.worse
    if worse:
        lines.append("WORSE: this change makes the corpus worse: " + "; ".join(worse) + ".")
    else:
        lines.append("OK: this change does not make the corpus worse.")
    return "\n".join(lines)


def comparison_dict(c: Comparison) -> dict[str, object]:
    return {
        "base_ref": c.base_ref,
        "base_sha": c.base_sha,
        "before": c.before.to_dict(),
        "after": c.after.to_dict(),
        "changes": [ch.__dict__ for ch in c.changes],
        "steals": [s.__dict__ for s in c.steals],
        "worse": c.worse,
        "head_errors": [str(e) for e in c.head_errors],
    }
