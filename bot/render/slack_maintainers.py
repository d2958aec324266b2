"""The App Home sections only maintainers (tracebot admins) see: entries people keep rejecting, the
errors pasted that nothing answered (both from ``tracebot stats``), and who ran which command where
(``tracebot audit``). These are their Slack views."""

from __future__ import annotations

import time
from typing import Any

from tracebot.render.slack import context, escape, inline_code, section
from tracebot.render.slack_limits import fit_section

Block = dict[str, Any]
TOP_GAPS = 5
AUDIT_ROWS = 15
# Slack refuses the whole Home view when one section passes 3,000 characters: long lists are cut at a line.
MORE_FLAGGED = "\n… `tracebot stats` lists the rest"
MORE_GAPS = "\n… `tracebot stats --unanswered` lists the rest"
MORE_AUDIT = "\n… `tracebot audit` lists the rest"


def maintainer_blocks(*, flagged: list[Any], gaps: list[Any], threshold: float) -> list[Block]:
    blocks: list[Block] = [{"type": "divider"}, section("*For maintainers*")]
    blocks.append(section(f"*Entries below {threshold:.0%} helpful*"))
    if flagged:
        rows = [
            f"• `{escape(s.entry_id)}`: {s.helpful_rate:.0%} helpful ({s.not_this} not this of "
            f"{s.helpful + s.not_this} votes)"
            for s in flagged
        ]
        blocks.append(section(fit_section("\n".join(rows), MORE_FLAGGED)))
        blocks.append(context("`tracebot stats` lists the lines they were rejected on."))
    else:
        blocks.append(context("None: every entry with votes is mostly helpful."))
    blocks.append(section(f"*Top {TOP_GAPS} unanswered errors*"))
    if gaps:
        rows = []
        for g in gaps[:TOP_GAPS]:
            last = time.strftime("%Y-%m-%d", time.gmtime(g.last_seen))
            where = ", ".join(f"<#{c}>" for c in g.channels[:3])
            rows.append(f"• *{g.count}×* {inline_code(g.key[:150])}\n    {where} · last {last}")
        blocks.append(section(fit_section("\n".join(rows), MORE_GAPS)))
        blocks.append(context("`tracebot stats --unanswered` lists them all; save a thread's fix with *Save as knowledge*."))
    else:
        blocks.append(context("None yet: every error pasted got a confident answer."))
    return blocks


def audit_line(row: dict[str, Any]) -> str:
    """One audit row as mrkdwn: who, what, where, what came of it, when. Everything in it is escaped."""
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(row["at"]))
    who = f"<@{escape(row['user'])}>" if row.get("user") else "someone"
    where = f"<#{escape(row['channel'])}>" if row.get("channel") else "a terminal"
    command = " ".join(x for x in (row.get("command") or "", row.get("args") or "") if x)
    shown = command if len(command) <= 120 else command[:119] + "…"
    outcome = escape(row.get("outcome") or "")
    return f"• {when} UTC · {who} · {inline_code(f'/trace {shown}')} in {where} · {outcome}"


def audit_blocks(rows: list[dict[str, Any]]) -> list[Block]:
    blocks: list[Block] = [section(f"*Who ran what* (last {AUDIT_ROWS} commands)")]
    if rows:
        blocks.append(section(fit_section("\n".join(audit_line(r) for r in rows[:AUDIT_ROWS]), MORE_AUDIT)))
        blocks.append(context("`tracebot audit` lists them all (`--user`, `--channel`, `--json`)."))
    else:
        blocks.append(context("No commands yet."))
    return blocks
