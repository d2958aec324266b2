"""Slack Block Kit views of tracebot's results. Plain dicts: this module never imports slack_sdk.

Every function returns ``(text, blocks)``: ``text`` is the notification / screen-reader fallback Slack
shows where blocks can't be shown; the blocks carry the same content. :mod:`tracebot.render.slack_limits`
fits the pair into Slack's limits afterwards.
"""

from __future__ import annotations

from typing import Any

from tracebot.ranks import format_ranks
from tracebot.result import Diagnosis, Match, Result, Source, StackGroup, Table

Block = dict[str, Any]
Rendered = tuple[str, list[Block]]

ACTION_HELPFUL = "tracebot_helpful"
ACTION_NOT_THIS = "tracebot_not_this"
ACTION_OTHER = "tracebot_other_matches"
ACTIONS = (ACTION_HELPFUL, ACTION_NOT_THIS, ACTION_OTHER)
STATUS_EMOJI = {
    "ok": ":white_check_mark:",
    "info": ":information_source:",
    "warning": ":warning:",
    "error": ":x:",
}


def escape(text: str) -> str:
    """Slack mrkdwn control characters; everything user-supplied goes through this."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code(text: str) -> str:
    """A ``` block that a ``` inside the text cannot close early."""
    return "```" + escape(text).replace("```", "`\u200b``") + "```"


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


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


def _where(match: Match) -> str:
    parts = [f"line {match.line_no}" if match.line_no else ""]
    if match.ranks:
        parts.append(f"{'rank' if len(match.ranks) == 1 else 'ranks'} {escape(format_ranks(match.ranks[:64]))}")
    if match.hosts:
        hosts = ", ".join(match.hosts[:5]) + (f" (+{len(match.hosts) - 5})" if len(match.hosts) > 5 else "")
        parts.append(f"host {escape(hosts)}")
    if match.occurrences > 1:
        parts.append(f"{match.occurrences} occurrences")
    return " · ".join(p for p in parts if p)


def _sources(sources: list[Source]) -> str:
    links = []
    for s in sources:
        label = escape(s.text())
        url = escape(s.url) if s.url else None  # a contributed entry's URL must not close the link early
        links.append(f"<{url}>" if url and label == url else f"<{url}|{label}>" if url else label)
    return "; ".join(x for x in links if x)


def match_blocks(match: Match) -> list[Block]:
    """One match explained: title, why it matched, the fix, the source and the next /trace command."""
    head = f"*{escape(match.title)}*  `{match.entry_id}` · score {match.score:.0f}"
    if match.role == "symptom":
        head += " · _symptom: the root cause is usually elsewhere in the log_"
    blocks = [section(head)]
    if match.kind == "phrase" and not match.line:
        why = (
            f"Your message reads like “{escape(match.signature)}”" if match.signature else "Matched the text"
        )
    else:
        why = "Matched " + (_where(match) or "the text")
    if match.line:
        why += "\n" + code(match.line)
    blocks.append(section(why))
    if match.cause:
        blocks.append(section(f"*Why:* {escape(match.cause)}"))
    if match.fix:
        steps = "\n".join(f"{i}. {escape(step)}" for i, step in enumerate(match.fix, 1))
        blocks.append(section(f"*Fix*\n{steps}"))
    footer = []
    if _sources(match.sources):
        footer.append(f"Source: {_sources(match.sources)}")
    if match.suggestions:
        footer.append("Next: " + "  ".join(f"`{escape(t)}`" for t in match.suggestions))
    if footer:
        blocks.append(context(*footer))
    return blocks


def _silent_text(d: Diagnosis) -> str:
    if not d.silent_ranks:
        return ""
    named = [f"{r} ({escape(d.silent_hosts[r])})" if r in d.silent_hosts else r for r in d.silent_ranks[:8]]
    more = f" and {len(d.silent_ranks) - 8} more" if len(d.silent_ranks) > 8 else ""
    who = "Rank" if len(d.silent_ranks) == 1 else "Ranks"
    return f":mag: {who} {', '.join(named)}{more} printed nothing while the others timed out: look there first."


def triage_lead(d: Diagnosis) -> list[Block]:
    """What failed first in a multi-rank log, and the ranks that went quiet: shown before the entries."""
    if not (d.cascade or d.silent_ranks):
        return []
    blocks: list[Block] = []
    ff = d.first_failure
    if ff is not None and not ff.cascade:
        where = " · ".join(
            p for p in (f"line {ff.line_no}", f"rank {ff.rank}" if ff.rank else "",
                        f"host {escape(ff.host)}" if ff.host else "",
                        f"in `{escape(ff.frame)}`" if ff.frame else "") if p
        )
        body = f"*First failure* · {where}\n{code(ff.text)}"
        if ff.entry_id is None:
            body += "\nNot a known problem: everything after it in the log follows from this error."
        blocks.append(section(body))
    silent = _silent_text(d)
    if silent or d.lagging_ranks:
        behind = f"Behind the others in the same collective: ranks {', '.join(d.lagging_ranks[:12])}." if d.lagging_ranks else ""
        blocks.append(section(" ".join(x for x in (silent, behind) if x)))
    return blocks


def triage_tail(d: Diagnosis) -> list[Block]:
    return [context(f"After the first failure: {escape(d.cascade)}.")] if d.cascade and d.first_failure else []


def answer(diagnosis: Diagnosis, *, diagnosis_id: int | None, always_answer: bool) -> Rendered | None:
    """The reply to a pasted error. ``None`` means say nothing (nothing worth posting, not asked directly).
    A multi-rank log leads with its first failure and the ranks that went quiet, then the entries, then
    the cascade that followed."""
    rendered = _answer_entries(diagnosis, diagnosis_id=diagnosis_id, always_answer=always_answer)
    if rendered is None:
        return None
    text, blocks = rendered
    lead, tail = triage_lead(diagnosis), triage_tail(diagnosis)
    ff = diagnosis.first_failure
    if lead and ff is not None and not ff.cascade and ff.entry_id is None:
        text = f"First failure: {ff.text[:200]}. " + text
    return text, [*lead, *blocks, *tail]


def _answer_entries(diagnosis: Diagnosis, *, diagnosis_id: int | None, always_answer: bool) -> Rendered | None:
    matches = diagnosis.matches
    threshold = diagnosis.threshold
    confident = diagnosis.confident
    if not diagnosis.worth_posting and not always_answer:
        return None
    if not matches:
        text = "No known error matched. Try `/trace kb <words>` to search the knowledge base."
        return text, [section(text)]
    if not confident:
        lines = [
            f"{i}. *{escape(m.title)}* `{m.entry_id}` · score {m.score:.0f}"
            + (f" — {_where(m)}" if _where(m) else "")
            for i, m in enumerate(matches[:5], 1)
        ]
        text = f"Nothing matched with confidence (threshold {threshold:.0f}). Closest guesses:"
        blocks = [section(text), section("\n".join(lines))]
        best = matches[0]
        if best.fix:
            blocks.append(context(f"If it is *{escape(best.title)}*: {escape(best.fix[0])}"))
        return text + " " + escape(", ".join(m.title for m in matches[:3])), blocks
    best = confident[0]
    blocks = match_blocks(best)
    also = confident[1:4]
    if also:
        blocks.append(
            context("Also matched: " + ", ".join(f"{escape(m.title)} ({m.score:.0f})" for m in also))
        )
    if diagnosis_id is not None:
        value = f"{diagnosis_id}:{best.entry_id}"
        buttons = [
            button("Helpful", ACTION_HELPFUL, value, "primary"),
            button("Not this", ACTION_NOT_THIS, value),
        ]
        if len(matches) > 1:
            buttons.append(button("Other matches", ACTION_OTHER, value))
        blocks.append({"type": "actions", "block_id": "tracebot_feedback", "elements": buttons})
    # The fallback text is mrkdwn too (notifications, screen readers): the log line is the user's.
    return escape(f"{best.title}: {best.summary or best.line}"), blocks


def other_matches(matches: list[Match], shown: str) -> Rendered:
    rest = [m for m in matches if m.entry_id != shown]
    if not rest:
        text = "No other entries matched."
        return text, [section(text)]
    blocks = [section("*Other matches*")]
    for m in rest[:5]:
        blocks.extend(match_blocks(m))
        blocks.append({"type": "divider"})
    return "Other matches: " + escape(", ".join(m.title for m in rest[:5])), blocks[:-1]


def pointer(permalink: str, title: str) -> Rendered:
    text = f"Same error as above: *{escape(title)}*, see <{permalink}|my earlier answer>."
    return text, [section(text)]


def _table(table: Table) -> str:
    widths = [len(c) for c in table.columns]
    for row in table.rows:
        widths = [max(w, len(str(v))) for w, v in zip(widths, row, strict=False)]

    def line(values: list[str]) -> str:
        return "  ".join(str(v).ljust(w) for v, w in zip(values, widths, strict=False)).rstrip()

    return "\n".join([line(table.columns), *(line(r) for r in table.rows)])


def _stack_group(group: StackGroup) -> list[Block]:
    where = f" stuck in `{escape(group.where.label())}`" if group.where else ""
    flag = ":warning: *odd one out* · " if group.odd_one_out else ""
    n = len(group.ranks)
    head = f"{flag}*rank{'s' if n != 1 else ''} {escape(format_ranks(group.ranks))}* ({n}){where}"
    if group.hosts:
        head += f" · {escape(', '.join(group.hosts[:4]))}"
    frames = "\n".join(f.label() for f in group.frames[:12])
    return [section(head + ("\n" + code(frames) if frames else ""))]


def result(res: Result) -> Rendered:
    """A plugin's (or a built-in command's) Result."""
    emoji = STATUS_EMOJI.get(res.status, "")
    blocks = [section(f"{emoji} *{escape(res.title)}*\n{escape(res.summary)}".strip())]
    for sec in res.sections:
        blocks.append(section(f"*{escape(sec.title)}*\n{escape(sec.text)}"))
    for table in res.tables:
        blocks.append(section(f"*{escape(table.title)}*\n{code(_table(table))}"))
    for group in res.stack_groups:
        blocks.extend(_stack_group(group))
    if res.unreadable:
        lines = "\n".join(f"{escape(k)}: {escape(v)}" for k, v in list(res.unreadable.items())[:20])
        blocks.append(context(f"Could not read {len(res.unreadable)}:\n{lines}"))
    if res.diagnosis is not None:
        blocks.extend(triage_lead(res.diagnosis))
    for m in res.matches[:3]:
        blocks.extend(match_blocks(m))
    if res.diagnosis is not None:
        blocks.extend(triage_tail(res.diagnosis))
    notes = res.data.get("notes") if isinstance(res.data, dict) else None
    if notes:
        blocks.append(context(*(escape(str(n)) for n in notes[:5])))
    if res.attachments:
        blocks.append(context("Attached: " + ", ".join(escape(a.filename) for a in res.attachments)))
    return escape(f"{res.title}: {res.summary}"), blocks


def parent(command: str, user: str | None, state: str) -> Rendered:
    """The run's parent message; ``state`` is plain text (a result's summary: job names, log lines)."""
    who = f" from <@{escape(user)}>" if user else ""
    text = f"`/trace {escape(command)}`{who} — {escape(state)}"
    return text, [section(text)]


def progress(message: str, elapsed_s: float) -> Rendered:
    text = f":hourglass_flowing_sand: {escape(message)} ({elapsed_s:.0f}s)"
    return text, [context(text)]
