"""The result types every producer returns and every renderer consumes.

The matcher returns a :class:`Diagnosis` whose matches are in their final order and carry everything a
view shows (summary, cause, fix, sources, filled-in ``/trace`` suggestions, evidence); plugins return a
:class:`Result` that embeds a Diagnosis. Slack Block Kit, the terminal and ``--json`` are three views of
the same object (``tracebot.render``); nobody re-sorts it or looks an entry up again. Plain data:
nothing here imports anything of tracebot.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["ok", "info", "warning", "error"]


@dataclass
class Source:
    """Where an entry's advice comes from: a document (and section) or a web page."""

    title: str  # the document's name, or the URL itself
    url: str | None = None
    section: str | None = None

    def text(self) -> str:
        """``document § section`` (or the URL) as plain text."""
        return f"{self.title} § {self.section}" if self.section else self.title


@dataclass
class Match:
    """One knowledge entry the matcher found in a text: where and why, and what the entry says."""

    entry_id: str
    title: str
    score: float  # 0..100, calibrated: >= the confidence threshold means "would reply unprompted"
    confident: bool
    role: str = "root-cause"  # or "symptom"
    signature: str = ""  # the anchor / regex / exemplar / phrase that fired
    kind: str = ""  # "anchor", "regex", "exemplar", "phrase", "similar" (the ranking model alone)
    # P(this is the right first answer) from the ranking model; None when the matcher's own scores ranked it
    probability: float | None = None
    line: str = ""  # the original line that matched (prefixes kept, trimmed to 500 chars)
    line_no: int | None = None  # 1-based line of the first occurrence of the strongest evidence
    occurrences: int = 0
    line_nos: list[int] = field(default_factory=list)  # the first few lines where it fired at all
    ranks: list[str] = field(default_factory=list)  # ranks seen on matching lines, in order of first sight
    hosts: list[str] = field(default_factory=list)
    # What the entry says, copied when the match is made so every view shows the same thing.
    priority: int = 50
    summary: str = ""
    cause: str = ""
    fix: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)  # /trace commands, ids from the text filled in
    # values the matched line states, named as in tracebot.knowledge.facts: {"requested": "20.00 MiB"}
    facts: dict[str, str] = field(default_factory=dict)
    see_also: list[str] = field(default_factory=list)  # related entries that matched the same line
    # entries matched in the same text, with exact evidence as this one, whose failure this one's lines
    # accompany (the knowledge base's examples say so: tracebot.matcher.explains); ranked after them
    explained_by: list[str] = field(default_factory=list)
    # among a log's root causes with exact evidence, 0 for the one that showed first (by time across
    # ranks, else by line); None for the rest and for pastes the ranking model orders
    order: int | None = None
    lang: str = "en"  # the language title, summary, cause and fix are in
    # Why a match that is not confident is not ("" when it is): "below point" (its score is under the threshold:
    # the confidence model is not sure enough, or a log's line evidence is weak), "not asked" (an answer on wording
    # alone to a text that asks nothing), "statement point" (the same for a text stating a problem or showing an
    # error, whose model is not as sure as such texts need), "guess" (a closest guess), "thanks" or "change" (the
    # text reads as a thank-you or a code change: nothing in it is answered). ``kb eval`` counts them.
    withheld: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scores_shown(matches: list[Match]) -> dict[str, float]:
    """Each match's score as every view prints it (by entry id), for matches in their final order: never above
    the score shown for a match listed before it. The order is the ranking's (exact evidence first, then the
    ranking model's probability, or the author's priority) and the score the calibrated confidence; where the two
    disagree a list of guesses read "2, 3, 2" and the second looked surer than the first. Nothing is re-sorted
    and the first answer keeps its own score; a later one is shown at most as sure as the one above it, never
    surer than itself, so a shown score never crosses the confidence threshold its match did not."""
    shown: dict[str, float] = {}
    ceiling = float("inf")
    for m in matches:
        ceiling = min(ceiling, m.score)
        shown.setdefault(m.entry_id, ceiling)
    return shown


def match_dicts(matches: list[Match]) -> list[dict[str, Any]]:
    """The matches for ``--json``, each with the score the other views print (``score_shown``)."""
    shown = scores_shown(matches)
    return [{**m.to_dict(), "score_shown": shown[m.entry_id]} for m in matches]


@dataclass
class FirstFailure:
    """What failed first in a log (see ``tracebot.matcher.triage``), known to the knowledge base or not."""

    line_no: int
    text: str  # the line as printed (prefixes kept, trimmed to 500 characters)
    rank: str | None = None
    host: str | None = None
    exception: str | None = None  # "KeyError", "torch.OutOfMemoryError"
    # torchrun's [defaultN] on a node whose ranks the log does not place in the job: the N (rank is None)
    local_rank: str | None = None
    message: str | None = None
    frame: str | None = None  # innermost frame in the user's own code: "train.py:123 in collate"
    entry_id: str | None = None  # the knowledge entry matched on this failure, if any
    cascade: bool = False  # nothing but consequences (watchdog timeouts…) was found: this is the first of those
    traceback_start: int | None = None  # line of its "Traceback (most recent call last):"

    def rank_label(self) -> str:
        """"rank 11", "local rank 3" when the log names only the process's place on its node, or ""."""
        return f"rank {self.rank}" if self.rank else f"local rank {self.local_rank}" if self.local_rank else ""


@dataclass(frozen=True)
class CascadeCount:
    """One kind of consequence in a log's cascade: how many lines, from how many ranks."""

    kind: str  # "watchdog timeout", "aborted communicator", "launcher exit"
    lines: int
    ranks: int = 0  # the ranks they came from, when the log names them


@dataclass
class Diagnosis:
    """What the matcher says about one text. ``matches`` is in final order, best first; empty means
    "no match". ``threshold`` is the confidence threshold the matches were judged against."""

    matches: list[Match] = field(default_factory=list)
    threshold: float = 75.0
    first_failure: FirstFailure | None = None  # for texts of more than a few lines
    # what a failure brought about after it, counted, most lines first (:attr:`cascade` says it in English;
    # a renderer says it in the reader's language); cascade_follows: after a first failure not one of them
    cascade_counts: list[CascadeCount] = field(default_factory=list)
    cascade_follows: bool = False
    silent_ranks: list[str] = field(default_factory=list)  # printed nothing while peers timed out, or went quiet first in a hang
    silent_hosts: dict[str, str] = field(default_factory=dict)  # rank -> host, where the log says
    lagging_ranks: list[str] = field(default_factory=list)  # ranks behind their peers in the same collective  # the default of tracebot.config.DEFAULT_THRESHOLD; result.py imports nothing
    lines_total: int = 0
    lines_scored: int = 0
    bytes_read: int = 0
    truncated: bool = False  # input was larger than the configured cap; only the head+tail was read
    notes: list[str] = field(default_factory=list)
    lang: str = "en"  # the reader's language, from the words around the log: "en" or "ja"
    # a chat line naming no error, tool or failure ("thanks!", "ok it works now", "how did you fix it?"): the
    # matcher still ranks its closest entries, but they are no answer (see :attr:`guesses_shown`)
    chat: bool = False

    @property
    def confident(self) -> list[Match]:
        return [m for m in self.matches if m.confident]

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None

    @property
    def unknown_first_failure(self) -> bool:
        """The log's first failure is no known problem, yet a cascade followed it: worth saying so."""
        ff = self.first_failure
        return ff is not None and not ff.cascade and ff.entry_id is None and bool(self.cascade)

    @property
    def worth_posting(self) -> bool:
        """Would be posted unprompted in a channel: a confident match, or an unknown first failure that
        brought a whole job down."""
        return bool(self.confident) or self.unknown_first_failure

    @property
    def guesses_shown(self) -> bool:
        """Closest guesses are shown to someone who asked: not for a chat line, whose "guesses" would be an
        NCCL tip in reply to a thank-you; that reader is asked for the error instead. Every view reads this."""
        return bool(self.matches) and not (self.chat and not self.confident)

    @property
    def scores_shown(self) -> dict[str, float]:
        """The score every view prints for each match (:func:`scores_shown`)."""
        return scores_shown(self.matches)

    @property
    def quiet_how(self) -> str:
        """How the silent ranks went quiet: "timed_out" in a watchdog cascade (they printed nothing while
        the others timed out), "stopped" in a hang with no watchdog (they stopped printing before the
        others). The renderers say it in the reader's language (``went_quiet.<how>``)."""
        return "timed_out" if "watchdog" in self.cascade else "stopped"

    @property
    def went_quiet(self) -> str:
        """:attr:`quiet_how` in English, for the terminal's text."""
        if self.quiet_how == "timed_out":
            return "printed nothing while the others timed out"
        return "stopped printing before the others"

    @property
    def cascade(self) -> str:
        """The cascade in English: "240 watchdog timeouts on 15 ranks and 3 launcher exits follow it"."""
        return cascade_phrase(self.cascade_counts, self.cascade_follows)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["matches"] = match_dicts(self.matches)
        d["cascade"] = self.cascade
        d["guesses_shown"] = self.guesses_shown
        return d


def cascade_phrase(counts: list[CascadeCount], follows: bool) -> str:
    """``counts`` in English, "… follow it" when they ``follows`` a first failure (:attr:`Diagnosis.cascade`)."""
    if not counts:
        return ""
    parts = []
    for c in counts:
        on = f" on {c.ranks} rank{'s' if c.ranks != 1 else ''}" if c.ranks > 1 else ""
        parts.append(f"{c.lines} {c.kind}{'s' if c.lines != 1 and not c.kind.endswith('s') else ''}{on}")
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    if follows:
        return f"{listed} follow{'s' if sum(c.lines for c in counts) == 1 else ''} it"
    return listed


@dataclass
class Section:
    """A titled paragraph. ``text`` is the neutral markup every renderer understands: plain text, with
    `code` spans and ```code blocks```; each renderer escapes the rest for its medium."""

    title: str
    text: str


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass
class Frame:
    function: str
    filename: str
    line: int | None = None

    def label(self) -> str:
        short = self.filename.rsplit("/", 1)[-1] if self.filename else "?"
        return f"{self.function} ({short}:{self.line})" if self.line else f"{self.function} ({short})"


@dataclass
class StackGroup:
    """Ranks whose (main-thread) stacks are identical, and the frame that says where they are."""

    ranks: list[str]
    frames: list[Frame]  # innermost first
    where: Frame | None = None  # innermost frame in user code or torch.distributed
    hosts: list[str] = field(default_factory=list)
    odd_one_out: bool = False


@dataclass
class Attachment:
    filename: str
    content: bytes
    mimetype: str = "text/plain"
    title: str = ""


@dataclass
class Result:
    """What a plugin command (or a diagnose) returns; renderers turn it into Slack / text / JSON."""

    title: str
    summary: str
    status: Status = "ok"
    sections: list[Section] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    stack_groups: list[StackGroup] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # rank/pid -> reason py-spy could not read it
    attachments: list[Attachment] = field(default_factory=list)
    diagnosis: Diagnosis | None = None  # the knowledge entries what the plugin found matches, ranked
    data: dict[str, Any] = field(default_factory=dict)  # machine-readable extras for --json

    @property
    def matches(self) -> list[Match]:
        return self.diagnosis.matches if self.diagnosis is not None else []

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("diagnosis")
        d["matches"] = match_dicts(self.matches)
        d["attachments"] = [
            {"filename": a.filename, "mimetype": a.mimetype, "title": a.title, "size": len(a.content)}
            for a in self.attachments
        ]
        return d
