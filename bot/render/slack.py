"""Slack Block Kit views of tracebot's results. Plain dicts: this module never imports slack_sdk.

Every function returns ``(text, blocks)``: ``text`` is the notification / screen-reader fallback Slack
shows where blocks can't be shown; the blocks carry the same content. :mod:`tracebot.render.slack_limits`
fits the pair into Slack's limits afterwards.
"""

from __future__ import annotations

import re
from typing import Any

from tracebot.markup import code_span
from tracebot.notes import read_note
from tracebot.ranks import first_few, format_ranks
from tracebot.render.facts import fact_phrases
from tracebot.render.messages import msg, say_cascade, say_note
from tracebot.result import Diagnosis, Match, Result, Source, StackGroup, Table, scores_shown
from tracebot.secrets import BIDI_CONTROLS

Block = dict[str, Any]
Rendered = tuple[str, list[Block]]

ACTION_HELPFUL = "tracebot_helpful"
ACTION_NOT_THIS = "tracebot_not_this"
ACTION_WHY = "tracebot_why_all_steps"  # the cause, every fix step, the evidence and the other matches
ACTION_OTHER = "tracebot_other_matches"  # on answers posted before "Why & all steps" existed
ACTIONS = (ACTION_HELPFUL, ACTION_NOT_THIS, ACTION_WHY, ACTION_OTHER)
_KANA = re.compile(r"[\u3040-\u30ff]{3}")
FIRST_STEPS = 3  # fix steps in the answer itself; the rest behind "Why & all steps"
FIX_BLOCK = "tracebot_fix"  # the block_id of an answer's fix steps (once per message; the HTML view finds it)
STATUS_EMOJI = {
    "ok": ":white_check_mark:",
    "info": ":information_source:",
    "warning": ":warning:",
    "error": ":x:",
}


# Unicode's directional overrides, isolates and marks: Slack lays out bidirectional text, so one in a job's
# name or a log line ran to the end of its line and reversed tracebot's own words after it ("rank 12 is
# stuck" read "kcuts si 21 knar"). Shown as "?", as the terminal shows them.
_DIRECTION_CONTROLS = dict.fromkeys(BIDI_CONTROLS, "?")


def escape(text: str) -> str:
    """Slack mrkdwn control characters, and the direction controls; everything user-supplied goes through this."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").translate(_DIRECTION_CONTROLS)


def inline_code(text: str) -> str:
    """A user's or a job's text as one inline code span: escaped, and unable to end the span (:func:`code_span`)."""
    return code_span(escape(text))


# Slack's mrkdwn escapes only &, < and > (Slack's "Formatting text for app surfaces"); its formatting marks
# have no escape. Inside *…* a "*" ends the bold early, and a "~", a backtick or a "_" at a word's edge
# starts strikethrough, code or italics: a title ("Loss *spikes*", "`module.` prefix") is shown with
# look-alikes of them instead (an underscore inside a word, NCCL_DEBUG, formats nothing and stays).
_MARKS = str.maketrans({"*": "\u2217", "~": "\u223c", "`": "\u02cb"})
_EDGE_UNDERSCORE = re.compile(r"(?<!\w)_|_(?!\w)")


def plain(text: str) -> str:
    """``text`` escaped, and shown as typed where mrkdwn would format it (inside bold, for a title)."""
    return _EDGE_UNDERSCORE.sub("\u02cd", escape(text).translate(_MARKS))


def bold(text: str) -> str:
    """``text`` in bold, as typed: no mark in it ends the bold or formats part of it."""
    return f"*{plain(text)}*"


_TICK_BEFORE_TICK = re.compile(r"`(?=`)")


def code(text: str) -> str:
    """A ``` block that no backtick in the text closes early or joins a fence: a zero-width space between two
    backticks in a row, and between a fence and a backtick at either end of the text. A line ending in a
    backtick ended its block in four, and a run of four backticks in it kept three together."""
    body = _TICK_BEFORE_TICK.sub("`\u200b", escape(text))
    return "```" + ("\u200b" if body.startswith("`") else "") + body + ("\u200b" if body.endswith("`") else "") + "```"


def section(text: str, block_id: str | None = None) -> Block:
    block: Block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    if block_id:
        block["block_id"] = block_id
    return block


def context(*texts: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": t} for t in texts if t]}


def button(label: str, action_id: str, value: str, style: str | None = None) -> Block:
    b: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action_id,
        "value": value,
    }
    if style:
        b["style"] = style
    return b


def _place(match: Match, lang: str, *, line_one: bool = True, hosts: int = 5) -> list[str]:
    """Where the match was, in the reader's words: its line (``line_one``: even line 1, which in a one-line
    paste says nothing), its rank or ranks, the first ``hosts`` hosts and how often."""
    said = []
    if match.line_no and (line_one or match.line_no > 1):
        said.append(msg(lang, "fact.line", v=match.line_no))
    if match.ranks:
        key = "fact.rank" if len(match.ranks) == 1 else "fact.ranks"
        said.append(msg(lang, key, v=escape(format_ranks(match.ranks[:64]))))
    if match.hosts:
        said.append(msg(lang, "fact.host", v=escape(first_few(match.hosts, hosts))))
    if match.occurrences > 1:
        said.append(msg(lang, "fact.occurrences", v=match.occurrences))
    return said


def _where(match: Match, lang: str = "en") -> str:
    return " · ".join(_place(match, lang))


# A source URL that may be a link: a web page, and nothing that ends Slack's <url|title> early ("|" or ">"
# would put the rest of a contributed URL where the reader expects the page's title).
_LINKABLE = re.compile(r"https?://[^\s|<>]+")


def _sources(sources: list[Source]) -> str:
    """Each source by title, linked to its public page where it has one (any other URL is not linked)."""
    links = []
    for s in sources:
        label = escape(s.text())
        url = escape(s.url) if s.url and _LINKABLE.fullmatch(s.url) else None
        links.append(f"<{url}>" if url and label == url else f"<{url}|{label}>" if url else label)
    return "; ".join(x for x in links if x)


def _head(match: Match, lang: str) -> str:
    head = bold(match.title)
    if match.role == "symptom":
        head += f" · _{msg(lang, 'symptom')}_"
    return head


def _score(match: Match, score: float) -> str:
    """The entry and the score shown for it in its list (:func:`~tracebot.result.scores_shown`), as every view
    prints them (tests/test_views_agree.py reads this)."""
    return f"`{match.entry_id}` · score {score:.0f}"


def _why_matched(match: Match, lang: str) -> str:
    if match.kind == "phrase" and not match.line:
        return msg(lang, "reads_like", phrase=escape(match.signature)) if match.signature else ""
    return msg(lang, "matched_line", where=_where(match, lang) or msg(lang, "the_text"))


def match_blocks(match: Match, lang: str = "en", *, fix_id: str | None = None, score: float | None = None
                 ) -> list[Block]:
    """One match in full: title, why it matched (the line), the cause, every fix step, the sources and
    the next /trace command. Shown behind "Why & all steps" and in plugin results. ``fix_id`` names the
    fix block where it is the message's one fix (block ids must be unique in a message); ``score`` is the
    score shown for it in its list (its own when it heads the list)."""
    blocks = [section(f"{_head(match, lang)}  {_score(match, match.score if score is None else score)}")]
    why = _why_matched(match, lang)
    if match.line:
        why += "\n" + code(match.line)
    if why:
        blocks.append(section(why))
    if match.cause:
        blocks.append(section(f"*{msg(lang, 'why')}:* {escape(match.cause)}"))
    if match.fix:
        blocks.append(section(f"*{msg(lang, 'fix')}*\n{_steps(match.fix)}", block_id=fix_id))
    footer = _footer(match, lang, match.sources)
    if footer:
        blocks.append(context(*footer))
    return blocks


def _steps(steps: list[str], start: int = 1) -> str:
    return "\n".join(f"{i}. {escape(step)}" for i, step in enumerate(steps, start))


def _footer(match: Match, lang: str, sources: list[Source]) -> list[str]:
    footer = []
    if _sources(sources):
        footer.append(f"{msg(lang, 'source')}: {_sources(sources)}")
    if match.suggestions:
        footer.append(f"{msg(lang, 'next')}: " + "  ".join(inline_code(t) for t in match.suggestions))
    return footer


# A sentence ends at ". " or "。", not at an abbreviation's period ("e.g. a wheel", "etc. as needed").
_SENTENCE_END = re.compile(r"(?i)(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)\. |。")


def one_line(text: str, limit: int = 200) -> str:
    """The first sentence of ``text``, at most ``limit`` characters."""
    text = " ".join(text.split())
    end = next((m for m in _SENTENCE_END.finditer(text, 1) if m.start() < limit), None)
    if end is not None:
        return text[: end.end()].strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _facts(match: Match, lang: str) -> str:
    """The values the error states (read off its line) and where it was, in the reader's words."""
    # the answer's first screen: three hosts, and line 1 (a one-line paste) is not worth saying
    return " · ".join(fact_phrases(match, lang, escape) + _place(match, lang, line_one=False, hosts=3))


def compact_blocks(match: Match, lang: str, *, line_shown: bool = False) -> list[Block]:
    """The answer a reader sees first: title and one-line summary, what their error says, the fix steps
    that matter most. The cause and the remaining steps are one click away. ``line_shown``: the matched
    line is already on screen (as the log's first failure), so it is not quoted twice."""
    blocks = [section(f"{_head(match, lang)}\n{escape(one_line(match.summary))}" if match.summary else _head(match, lang))]
    facts = _facts(match, lang)
    if match.line and not line_shown and not match.facts and match.kind != "phrase" and not _KANA.search(match.line):
        # (a line in kana is the reader's own question, not a log line worth quoting back)
        # nothing read off the line: quote it, short, so the fix stays on the first screen
        quoted = match.line if len(match.line) <= 160 else match.line[:159] + "…"
        facts += ("\n" if facts else "") + inline_code(quoted)
    if facts:
        blocks.append(section(f"*{msg(lang, 'what_it_says')}:* {facts}"))
    elif _why_matched(match, lang):
        blocks.append(context(_why_matched(match, lang)))
    if match.fix:
        steps = _steps(match.fix[:FIRST_STEPS])
        blocks.append(section(f"*{msg(lang, 'fix')}*\n{steps}", block_id=FIX_BLOCK))
    return blocks


def _silent_text(d: Diagnosis) -> str:
    if not d.silent_ranks:
        return ""
    named = [f"{r} ({escape(d.silent_hosts[r])})" if r in d.silent_hosts else r for r in d.silent_ranks[:8]]
    more = msg(d.lang, "silent_more", n=len(d.silent_ranks) - 8) if len(d.silent_ranks) > 8 else ""
    key = "silent_one" if len(d.silent_ranks) == 1 else "silent_many"
    return msg(d.lang, key, ranks=", ".join(named), more=more, how=msg(d.lang, f"went_quiet.{d.quiet_how}"))


def triage_lead(d: Diagnosis) -> list[Block]:
    """What failed first in a multi-rank log, and the ranks that went quiet: shown before the entries."""
    if not (d.cascade or d.silent_ranks):
        return []
    blocks: list[Block] = []
    ff = d.first_failure
    if ff is not None and not ff.cascade:
        rank = (msg(d.lang, "fact.rank", v=ff.rank) if ff.rank else
                msg(d.lang, "fact.local_rank", v=ff.local_rank) if ff.local_rank else "")
        where = " · ".join(
            p for p in (msg(d.lang, "fact.line", v=ff.line_no), rank,
                        msg(d.lang, "fact.host", v=escape(ff.host)) if ff.host else "",
                        msg(d.lang, "in_frame", v=inline_code(ff.frame)) if ff.frame else "") if p
        )
        shown = ff.text if len(ff.text) <= 240 else ff.text[:239] + "…"
        body = f"*{msg(d.lang, 'first_failure')}* · {where}\n{code(shown)}"
        if ff.entry_id is None:
            body += "\n" + msg(d.lang, "unknown_first_failure")
        blocks.append(section(body))
    silent = _silent_text(d)
    if silent or d.lagging_ranks:
        behind = msg(d.lang, "lagging", ranks=", ".join(d.lagging_ranks[:12])) if d.lagging_ranks else ""
        blocks.append(section(" ".join(x for x in (silent, behind) if x)))
    return blocks


def triage_tail(d: Diagnosis) -> list[Block]:
    if not (d.cascade and d.first_failure):
        return []
    return [context(msg(d.lang, "after_first_failure", cascade=escape(say_cascade(d, d.lang))))]


def answer(diagnosis: Diagnosis, *, diagnosis_id: int | None, always_answer: bool) -> Rendered | None:
    """The reply to a pasted error. ``None`` means say nothing (nothing worth posting, not asked directly).
    A multi-rank log leads with its first failure and the ranks that went quiet, then the entries, then
    the cascade that followed."""
    lead, tail = triage_lead(diagnosis), triage_tail(diagnosis)
    ff = diagnosis.first_failure
    best = diagnosis.confident[0] if diagnosis.confident else None
    line_shown = bool(lead) and ff is not None and not ff.cascade and best is not None and ff.line_no == best.line_no
    rendered = _answer_entries(diagnosis, diagnosis_id=diagnosis_id, always_answer=always_answer, line_shown=line_shown)
    if rendered is None:
        return None
    text, blocks = rendered
    if lead and ff is not None and not ff.cascade and ff.entry_id is None:
        text = escape(f"{msg(diagnosis.lang, 'first_failure')}: {ff.text[:200]}. ") + text  # the log line is the user's (a file's markup is live)
    return text, [*lead, *blocks, *tail]


def _answer_entries(
    diagnosis: Diagnosis, *, diagnosis_id: int | None, always_answer: bool, line_shown: bool = False
) -> Rendered | None:
    matches = diagnosis.matches
    lang = diagnosis.lang
    confident = diagnosis.confident
    if not diagnosis.worth_posting and not always_answer:
        return None
    if not diagnosis.guesses_shown:  # nothing matched, or a chat line ("thanks!"): ask for the error
        text = msg(lang, "no_error_here" if matches else "no_match")
        return text, [section(text)]
    scores = diagnosis.scores_shown
    if not confident:
        lines = [
            f"{i}. {bold(m.title)} {_score(m, scores[m.entry_id])}" + (f" — {_where(m, lang)}" if _where(m, lang) else "")
            for i, m in enumerate(matches[:5], 1)
        ]
        text = msg(lang, "not_confident", threshold=f"{diagnosis.threshold:.0f}")
        blocks = [section(text), section("\n".join(lines))]
        best = matches[0]
        if best.fix:
            blocks.append(context(msg(lang, "if_it_is", title=plain(best.title), step=escape(best.fix[0]))))
        return text + " " + escape(", ".join(m.title for m in matches[:3])), blocks
    best = confident[0]
    blocks = compact_blocks(best, lang, line_shown=line_shown)
    if diagnosis_id is not None:
        value = f"{diagnosis_id}:{best.entry_id}:{lang}"
        buttons = [
            button(msg(lang, "helpful"), ACTION_HELPFUL, value, "primary"),
            button(msg(lang, "not_this"), ACTION_NOT_THIS, value),
            button(msg(lang, "why_all"), ACTION_WHY, value),
        ]
        blocks.append({"type": "actions", "block_id": "tracebot_feedback", "elements": buttons})
    footer = [_score(best, scores[best.entry_id]), *_footer(best, lang, best.sources[:2])]
    also = confident[1:4]
    if also:
        footer.append(f"{msg(lang, 'also_matched')}: "
                      + ", ".join(f"{escape(m.title)} ({scores[m.entry_id]:.0f})" for m in also))
    blocks.append(context(*footer))
    # The fallback text is mrkdwn too (notifications, screen readers): the log line is the user's.
    return escape(f"{best.title}: {one_line(best.summary) or best.line}"), blocks


def details(matches: list[Match], shown: str, lang: str = "en") -> Rendered:
    """"Why & all steps": the shown entry in full, then the other matches, for the one who asked."""
    first = next((m for m in matches if m.entry_id == shown), None)
    scores = scores_shown(matches)
    blocks = match_blocks(first, lang, fix_id=FIX_BLOCK, score=scores[shown]) if first is not None else []
    others = other_matches(matches, shown, lang)
    if first is None or len(others[1]) > 1:
        blocks += ([{"type": "divider"}] if blocks else []) + others[1]
    title = first.title if first is not None else msg(lang, "other_matches")
    return escape(f"{title}: {msg(lang, 'why_all')}"), blocks


def other_matches(matches: list[Match], shown: str, lang: str = "en") -> Rendered:
    rest = [m for m in matches if m.entry_id != shown]
    if not rest:
        text = msg(lang, "no_other_matches")
        return text, [section(text)]
    scores = scores_shown(matches)
    lines = [
        f"{i}. {bold(m.title)} {_score(m, scores[m.entry_id])}" + (f"\n    {escape(m.fix[0])}" if m.fix else "")
        for i, m in enumerate(rest[:5], 1)
    ]
    return (
        f"{msg(lang, 'other_matches')}: " + escape(", ".join(m.title for m in rest[:5])),
        [section(f"*{msg(lang, 'other_matches')}*"), section("\n".join(lines))],
    )


def pointer(permalink: str, title: str, lang: str = "en") -> Rendered:
    """The repeat of an error already answered in the thread: a link to that answer, in the reader's language."""
    text = msg(lang, "pointer", title=plain(title), link=permalink)
    return text, [section(text)]


def logs_unread(notes: list[str], lang: str = "en") -> Rendered:
    """An unprompted log that was not read, or not all of it: why, in one short message."""
    text, said = msg(lang, "logs_unread"), _notes(notes, lang)
    return f"{text} " + "; ".join(said), [section(text), context(*said)]


def notes_block(notes: list[str], lang: str = "en") -> Block:
    """The notes shown under an answer (what was not read, or not all of it), in the thread's language."""
    return context(*_notes(notes, lang))


def _notes(notes: list[str], lang: str) -> list[str]:
    return [_note(n, lang) for n in notes[:5]]


def _note(note: str, lang: str) -> str:
    """A note in ``lang``, the file it is about as code: a name is the uploader's text, and its ``*``,
    ``_``, ``~`` and backticks would otherwise format the note (``*final* run.log``)."""
    said = say_note(note, lang)
    read = read_note(note)
    if read is None or read.file is None or not said.startswith(f"{read.file}: "):
        return escape(said)
    return f"{inline_code(read.file)}: {escape(said[len(read.file) + 2 :])}"


def _table(table: Table) -> str:
    widths = [len(c) for c in table.columns]
    for row in table.rows:
        widths = [max(w, len(str(v))) for w, v in zip(widths, row, strict=False)]

    def line(values: list[str]) -> str:
        return "  ".join(str(v).ljust(w) for v, w in zip(values, widths, strict=False)).rstrip()

    return "\n".join([line(table.columns), *(line(r) for r in table.rows)])


def _stack_group(group: StackGroup) -> list[Block]:
    where = f" stuck in {inline_code(group.where.label())}" if group.where else ""
    flag = ":warning: *odd one out* · " if group.odd_one_out else ""
    n = len(group.ranks)
    head = f"{flag}*rank{'s' if n != 1 else ''} {escape(format_ranks(group.ranks))}* ({n}){where}"
    if group.hosts:
        head += f" · {escape(first_few(group.hosts, 4))}"
    frames = "\n".join(f.label() for f in group.frames[:12])
    return [section(head + ("\n" + code(frames) if frames else ""))]


def result(res: Result) -> Rendered:
    """A plugin's (or a built-in command's) Result."""
    emoji = STATUS_EMOJI.get(res.status, "")
    blocks = [section(f"{emoji} {bold(res.title)}\n{escape(res.summary)}".strip())]
    for sec in res.sections:
        blocks.append(section(f"{bold(sec.title)}\n{escape(sec.text)}"))
    for table in res.tables:
        blocks.append(section(f"{bold(table.title)}\n{code(_table(table))}"))
    for group in res.stack_groups:
        blocks.extend(_stack_group(group))
    if res.unreadable:
        lines = "\n".join(f"{escape(k)}: {escape(v)}" for k, v in list(res.unreadable.items())[:20])
        blocks.append(context(f"Could not read {len(res.unreadable)}:\n{lines}"))
    if res.diagnosis is not None:
        blocks.extend(triage_lead(res.diagnosis))
    scores = scores_shown(res.matches)
    for m in res.matches[:3]:
        blocks.extend(match_blocks(m, score=scores[m.entry_id]))
    if res.diagnosis is not None:
        blocks.extend(triage_tail(res.diagnosis))
    notes = res.data.get("notes") if isinstance(res.data, dict) else None
    if notes:
        blocks.append(context(*(escape(str(n)) for n in notes[:5])))
    if res.attachments:
        blocks.append(context("Attached: " + ", ".join(escape(a.filename) for a in res.attachments)))
    return escape(f"{res.title}: {res.summary}"), blocks


def result_summary(res: Result, filename: str) -> Rendered:
    """A result too long to read in the thread: its title and summary, each stack group once (one line:
    ranks and where they are), the start of each section, the best knowledge entry, and a pointer to
    the file holding everything. Stays well under 4,000 characters."""
    emoji = STATUS_EMOJI.get(res.status, "")
    summary = res.summary if len(res.summary) <= 1200 else res.summary[:1199] + "…"
    blocks = [section(f"{emoji} {bold(res.title)}\n{escape(summary)}".strip())]
    if res.stack_groups:
        heads = [_stack_head(g) for g in res.stack_groups[:8]]
        more = len(res.stack_groups) - 8
        blocks.append(section("\n".join(heads) + (f"\n… and {more} more groups" if more > 0 else "")))
    shown = [sec for sec in res.sections if not sec.text.lstrip().startswith("```")][:4]
    if shown:
        blocks.append(section("\n".join(
            f"{bold(sec.title)}: {escape(one_line(sec.text.replace(chr(10), ' '), 160))}" for sec in shown
        )))
    if res.matches and res.matches[0].confident:
        blocks.extend(compact_blocks(res.matches[0], "en"))
        blocks.append(context(_score(res.matches[0], res.matches[0].score)))  # the first keeps its own score
    blocks.append(context(f"Everything ({len(res.sections)} sections, {len(res.stack_groups)} stack groups) "
                          f"is in the attached file {inline_code(filename)}."))
    return escape(f"{res.title}: {one_line(res.summary)}"), blocks


def _stack_head(group: StackGroup) -> str:
    n = len(group.ranks)
    where = f" in {inline_code(group.where.label())}" if group.where else ""
    flag = ":warning: odd one out · " if group.odd_one_out else ""
    return f"{flag}rank{'s' if n != 1 else ''} {escape(format_ranks(group.ranks))} ({n}){where}"


def parent(command: str, user: str | None, state: str) -> Rendered:
    """The run's parent message; ``state`` is plain text (a result's summary: job names, log lines)."""
    who = f" from <@{escape(user)}>" if user else ""
    text = f"{inline_code(f'/trace {command}')}{who} — {escape(state)}"
    return text, [section(text)]


def progress(message: str, elapsed_s: float) -> Rendered:
    text = f":hourglass_flowing_sand: {escape(message)} ({elapsed_s:.0f}s)"
    return text, [context(text)]
