"""Terminal rendering of a :class:`Diagnosis` or a plugin :class:`Result` (CLI, console, admins)."""

from __future__ import annotations

import textwrap

from tracebot.ranks import format_ranks, ranks_phrase
from tracebot.render.facts import fact_phrases
from tracebot.render.messages import msg
from tracebot.result import Diagnosis, Match, Result, scores_shown


def where_text(m: Match) -> str:
    """"line 1234 (rank 3 on slurm0-a3-ghpc-8; 17 times, ranks 3, 5–9)" — where a match was found."""
    if m.line_no is None:
        return f"the question resembles “{m.signature}”" if m.kind == "phrase" else ""
    parts = [f"line {m.line_no}"]
    first = []
    if m.ranks:
        first.append(f"rank {m.ranks[0]}")
    if m.hosts:
        first.append(f"on {m.hosts[0]}")
    if first:
        parts.append("(" + " ".join(first) + ")")
    if m.occurrences > 1:
        extra = f"{m.occurrences} times"
        if len(m.ranks) > 1:
            extra += f", ranks {format_ranks(m.ranks)}"
        if len(m.hosts) > 1:
            extra += f", {len(m.hosts)} hosts"
        parts.append(f"— {extra}")
    return " ".join(parts)


def render_match(m: Match, *, n: int | None = None, detail: bool = True, score: float | None = None) -> str:
    """One match; ``score`` is the score shown for it in its list (:func:`~tracebot.result.scores_shown`)."""
    head = f"{n}. " if n is not None else ""
    flags = "confident" if m.confident else "not confident"
    role = "symptom" if m.role == "symptom" else "root cause"
    out = [f"{head}{m.title}  [{m.entry_id}]  score {m.score if score is None else score:g} · {flags} · {role}"]
    where = where_text(m)
    if where:
        out.append(f"   {'why:' if m.line_no is None else 'found at'} {where}")  # a question is read, not found
    if m.line:
        out.append(f"     {m.line[:300]}")
    if m.facts:
        out.append(f"   says: {' · '.join(fact_phrases(m))}")
    if m.kind and m.kind != "phrase":
        out.append(f"   why: {m.kind} “{m.signature[:120]}”")
    if detail and m.summary:
        out.append("   " + "\n   ".join(textwrap.wrap(m.summary, 100)))
        if m.role == "symptom":
            out.append("   This is a symptom: look for the first error on another rank for the cause.")
        out.append("   fix:")
        for i, step in enumerate(m.fix, 1):
            lines = step.strip().splitlines() or [""]
            out.append(f"     {i}. {lines[0]}")
            out += [f"        {ln}" for ln in lines[1:]]
        if m.suggestions:
            out.append(f"   try: {' · '.join(m.suggestions)}")
        if m.sources:
            out.append(f"   source: {'; '.join(s.text() for s in m.sources)}")
    return "\n".join(out)


def triage_lead(d: Diagnosis) -> list[str]:
    """The first failure of a multi-rank log and the ranks that went quiet, before the entries."""
    if not (d.cascade or d.silent_ranks):
        return []
    out = []
    ff = d.first_failure
    if ff is not None and not ff.cascade:
        where = ", ".join(p for p in (ff.rank_label(), f"host {ff.host}" if ff.host else "") if p)
        out.append(f"First failure: line {ff.line_no}" + (f" ({where})" if where else "") + f"\n     {ff.text[:300]}")
        if ff.frame:
            out[-1] += f"\n   in {ff.frame}"
        out[-1] += f"\n   → {ff.entry_id}" if ff.entry_id else "\n   not a known problem: everything after it follows from this error"
    if d.silent_ranks:
        named = [f"{r} ({d.silent_hosts[r]})" if r in d.silent_hosts else r for r in d.silent_ranks[:16]]
        out.append(f"Silent: {ranks_phrase(d.silent_ranks[:16]) if not d.silent_hosts else 'ranks ' + ', '.join(named)}"
                   f" {d.went_quiet}: look there first.")
    if d.lagging_ranks:
        out.append(f"Behind the others in the same collective: {ranks_phrase(d.lagging_ranks)}.")
    return out


def render_diagnosis(d: Diagnosis, *, show_all: bool = False) -> str:
    shown = d.matches if show_all else [m for m in d.matches if m.confident] or d.matches[:3]
    out: list[str] = triage_lead(d)
    if not d.matches:
        out.append(f"No known problem matched ({d.lines_total} line{'' if d.lines_total == 1 else 's'} read).")
    elif not d.guesses_shown and not show_all:
        out.append(msg("en", "no_error_here").replace("`", ""))
        shown = []
    elif not d.confident:
        out.append("No confident match. Closest entries:")
    scores = d.scores_shown
    for i, m in enumerate(shown, 1):
        out.append(render_match(m, n=i, detail=m.confident or show_all, score=scores[m.entry_id]))
    if d.cascade and d.first_failure is not None:
        out.append(f"After the first failure: {d.cascade}.")
    if d.truncated or d.notes:
        out += [f"note: {n}" for n in d.notes]
    return "\n\n".join(out) if len(out) > 1 else (out[0] if out else "")


def render_result(r: Result) -> str:
    icon = {"ok": "✔", "info": "ℹ", "warning": "⚠", "error": "✖"}.get(r.status, "")
    out = [f"{icon} {r.title}".strip(), r.summary]
    for s in r.sections:
        out.append(f"── {s.title}\n{s.text}")
    for t in r.tables:
        out.append(_table(t.title, t.columns, t.rows))
    if r.stack_groups:
        lines = ["── Stack groups (smallest first)"]
        for g in r.stack_groups:
            where = g.where.label() if g.where else (g.frames[0].label() if g.frames else "?")
            mark = "  ← odd one out" if g.odd_one_out else ""
            lines.append(f"{ranks_phrase(g.ranks)}: {where}{mark}")
            lines += [f"    {f.label()}" for f in g.frames[:12]]
        out.append("\n".join(lines))
    if r.unreadable:
        out.append("── Could not read\n" + "\n".join(f"{k}: {v}" for k, v in r.unreadable.items()))
    if r.diagnosis is not None:
        out += triage_lead(r.diagnosis)
    if r.matches:
        out.append("── Knowledge base")
        scores = scores_shown(r.matches)
        out += [render_match(m, n=i, detail=i == 1, score=scores[m.entry_id]) for i, m in enumerate(r.matches, 1)]
    notes = r.data.get("notes") if isinstance(r.data, dict) else None
    if notes:
        out.append("\n".join(f"note: {n}" for n in notes))
    for a in r.attachments:
        out.append(f"[attachment] {a.filename} ({len(a.content)} bytes) {a.title}")
    return "\n\n".join(x for x in out if x)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> str:
    widths = [len(c) for c in columns]
    for row in rows:
        for i, cell in enumerate(row[: len(widths)]):
            widths[i] = min(60, max(widths[i], len(str(cell))))
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [f"── {title}", fmt.format(*columns)]
    lines += [fmt.format(*[str(c)[:60] for c in row[: len(widths)]]) for row in rows]
    return "\n".join(lines)
