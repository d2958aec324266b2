"""Save a Slack thread as knowledge: the thread's error and the reply that fixed it become a draft entry.

Transport-neutral: the Slack shortcut and ``tracebot kb new --from-thread`` both hand over plain text
(the error, the fix, the thread's permalink). The draft is made as ``kb new --from`` makes one
(signatures masked, the error as its first ``examples.match``), with the fix reply as its first fix
step and the permalink as a source; it is linted and compared (``kb eval --compare``) beside the live
knowledge base, in memory, so the live one never changes. Where a git checkout of the knowledge
repository is configured (``knowledge_repo: {path, knowledge, push, remote, cases}`` in TRACEBOT_CONFIG),
the draft is committed on a new branch with git plumbing (the checkout's working tree and index are
left alone) and pushed only when ``push: true``.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracebot.authoring.compare import Comparison, _git, compare_matchers, format_comparison
from tracebot.authoring.draft import DraftError, checked_draft, draft_from_snippet, existing_entry
from tracebot.authoring.evaluate import Case, load_cases
from tracebot.authoring.lint import entry_problems
from tracebot.config import Config
from tracebot.knowledge.loader import KnowledgeBase, load_knowledge_base
from tracebot.markup import plain_text
from tracebot.matcher import Matcher
from tracebot.matcher.signals import error_signature
from tracebot.secrets import REDACTED, Scrubber, for_keeping

AREA = "slack"  # drafts from threads go to knowledge/slack/ until a maintainer files them
MAX_ID_WORDS = 6
_WORD = re.compile(r"[a-z0-9]+")
_LEADING_MENTIONS = re.compile(r"^(?:<@user>[\s,:]*)+")


@dataclass
class ThreadMessage:
    ts: str
    user: str | None
    text: str
    bot: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_slack(cls, m: dict[str, Any]) -> ThreadMessage:
        """One message of ``conversations.replies`` (or a Slack export), its text as its author wrote it:
        Slack's escaping of & < >, its link markup and a paste's code fences undone (a draft's regex
        ending in ``` matches no log, an example with ``&lt;module&gt;`` no traceback)."""
        return cls(
            str(m.get("ts", "")),
            m.get("user"),
            plain_text(str(m.get("text") or "")),
            bool(m.get("bot_id")) or m.get("subtype") == "bot_message",
            list(m.get("files") or []),
        )


def fix_choices(messages: list[ThreadMessage]) -> list[ThreadMessage]:
    """The replies a person could pick as the fix: not the root, not tracebot's (or any bot's) answers."""
    return [m for m in messages[1:] if not m.bot and m.text.strip()]


def thread_error(messages: list[ThreadMessage]) -> str:
    """The thread's error: the root message, or the first message that states an error when the root
    only asks a question about it."""
    root = messages[0].text if messages else ""
    if error_signature(root) is not None:
        return root
    return next((m.text for m in messages if not m.bot and error_signature(m.text) is not None), root)


def one_line(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class RepoSettings:
    path: Path
    knowledge: str = "knowledge"  # the knowledge directory, relative to the checkout
    push: bool = False
    remote: str = "origin"

    @classmethod
    def from_config(cls, config: Config) -> RepoSettings | None:
        section = config.plugin_settings("knowledge_repo")
        if not section.get("path"):
            return None
        return cls(
            Path(str(section["path"])),
            str(section.get("knowledge") or "knowledge"),
            section.get("push") is True,
            str(section.get("remote") or "origin"),
        )


@dataclass
class SavedDraft:
    entry_id: str
    yaml: str
    problems: list[str]  # kb lint on the draft: the TODOs left, examples that do not match
    comparison: Comparison
    branch: str | None = None
    commit: str | None = None
    pushed: bool = False
    pr_command: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def delta(self) -> str:
        b, a = self.comparison.before, self.comparison.after
        return f"top-1 {b.top1:.0%} → {a.top1:.0%} on {a.positives} case(s), false positives {len(b.false_positives)} → {len(a.false_positives)}"

    def summary(self) -> str:
        lines = [f"Drafted `{self.entry_id}` from this thread. Accuracy: {self.delta}."]
        if self.comparison.worse:
            lines.append(":warning: It makes the corpus worse: " + "; ".join(self.comparison.worse) + ".")
        if self.problems:
            lines.append(f"`kb lint`: {len(self.problems)} thing(s) to finish: " + "; ".join(self.problems[:5]))
        if self.branch:
            where = "pushed to" if self.pushed else "committed on"
            lines.append(f"{where} branch `{self.branch}`. Open the pull request with: `{self.pr_command}`")
        lines += self.notes
        return "\n".join(lines)

    def report(self) -> str:
        """The full text for a terminal: the summary and the comparison table."""
        return self.summary() + "\n\n" + format_comparison(self.comparison)


def entry_id_for(error: str, kb_root: Path) -> str:
    """An id from the error's masked signature (``valueerror-shard-index-out-of-range``), unused so far."""
    signature = error_signature(error, min_score=1) or error
    unmasked = re.sub(r"<\w+>", " ", signature.replace(REDACTED, " ").lower())  # nor a scrubbed secret's marker
    words = [w for w in _WORD.findall(unmasked) if len(w) > 1]
    base = "-".join(words[:MAX_ID_WORDS]) or "slack-thread"
    entry_id, n = base, 2
    while existing_entry(kb_root, entry_id) is not None:
        entry_id, n = f"{base}-{n}", n + 1
    return entry_id


def _title(error: str) -> str:
    """The error line itself, as a first title the author will reword."""
    signature = error_signature(error, min_score=1)
    lines = [ln.strip() for ln in error.splitlines() if ln.strip()]
    chosen = next((ln for ln in lines if signature and error_signature(ln, min_score=1) == signature), "")
    return (chosen or (lines[0] if lines else ""))[:90]


def save_from_thread(
    *,
    kb_root: Path,
    error: str,
    fix: str,
    permalink: str,
    repo: RepoSettings | None = None,
    cases_path: Path | None = None,
    scrubber: Scrubber | None = None,
    entry_id: str | None = None,
) -> SavedDraft:
    """Draft, lint and compare an entry from a thread; commit it on a branch where a checkout is set."""
    error = for_keeping(error, scrubber)
    fix = _LEADING_MENTIONS.sub("", for_keeping(fix, scrubber))
    if not error.strip():
        raise DraftError("the thread has no error text to draft from (paste the error as the first message)")
    entry_id = entry_id or entry_id_for(error, kb_root)
    text = draft_from_snippet(
        entry_id,
        error,
        title=_title(error),
        sources=[{"url": permalink}],
        fix=[fix] if fix.strip() else [],
        note="Drafted by tracebot from a Slack thread; finish the TODOs, then file it under its area.",
    )
    # The draft is checked beside the live knowledge base in memory: a copy of the folder per click cost
    # its size in disk and time, and failed on what the loader only reports (a dangling link, a FIFO).
    before_kb, before_errors = load_knowledge_base(kb_root)
    _, entry = checked_draft(kb_root, entry_id, text, AREA, shown=f"knowledge/{AREA}/{entry_id}.yaml")
    entry.path = Path("knowledge", AREA, f"{entry_id}.yaml")  # as the problems name it
    after_kb = KnowledgeBase([*before_kb.entries, entry], before_kb.root, before_kb.silence)
    before_m, after_m = Matcher(before_kb), Matcher(after_kb)
    mine = [str(p) for p in entry_problems(after_m, entry)]
    comparison = compare_matchers(before_m, after_m, _cases(cases_path, entry_id, error), base_ref="live",
                                  errors=(before_errors, before_errors))
    saved = SavedDraft(entry_id, text, mine, comparison)
    if repo is not None:
        commit_draft(repo, saved)
    return saved


def save_configured(config: Config, **kw: Any) -> SavedDraft:
    """:func:`save_from_thread` with the ``knowledge_repo`` section of the configuration: the checkout
    to commit to and the corpus (``cases``) to compare on."""
    cases = config.plugin_settings("knowledge_repo").get("cases")
    return save_from_thread(
        repo=RepoSettings.from_config(config), cases_path=Path(cases) if cases else None, **kw
    )


def _cases(cases_path: Path | None, entry_id: str, error: str) -> list[Case]:
    cases = load_cases(cases_path) if cases_path and cases_path.is_file() else []
    return [*cases, Case("this-thread", entry_id, [], error, kind="slack-thread")]


def commit_draft(repo: RepoSettings, saved: SavedDraft) -> None:
    """Commit the draft on ``kb/<id>`` (from the checkout's HEAD) without touching its working tree."""
    rel = f"{repo.knowledge.strip('/')}/{AREA}/{saved.entry_id}.yaml"
    branch = f"kb/{saved.entry_id}"
    env = {
        "GIT_AUTHOR_NAME": "tracebot",
        "GIT_AUTHOR_EMAIL": "tracebot@localhost",
        "GIT_COMMITTER_NAME": "tracebot",
        "GIT_COMMITTER_EMAIL": "tracebot@localhost",
    }
    with tempfile.TemporaryDirectory(prefix="tracebot-index-") as tmp:
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        draft = Path(tmp) / "draft.yaml"
        draft.write_text(saved.yaml, encoding="utf-8")

        def git(*args: str) -> str:
            return _git(list(args), repo.path, env=env).decode().strip()

        if _git(["branch", "--list", branch], repo.path).strip():
            # Saved before (the same thread twice, or the same error in two threads): the draft is still
            # posted, and the branch that exists is left for its author.
            saved.notes.append(f"Branch `{branch}` already exists in the checkout, so nothing was committed.")
            return
        head = git("rev-parse", "--verify", "HEAD^{commit}")
        git("read-tree", head)
        blob = git("hash-object", "-w", "--", str(draft))
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
        tree = git("write-tree")
        message = f"Add {saved.entry_id} (drafted from a Slack thread)\n\n{saved.summary()}\n"
        commit = git("commit-tree", tree, "-p", head, "-m", message)
        # The empty old value: refuse to move a branch that already exists.
        git("update-ref", f"refs/heads/{branch}", commit, "")
        if repo.push:
            git("push", "--", repo.remote, branch)
    saved.branch, saved.commit, saved.pushed = branch, commit, repo.push
    push = "" if repo.push else f"git -C {repo.path} push {repo.remote} {branch} && "
    saved.pr_command = f"{push}cd {repo.path} && gh pr create --head {branch} --fill"
