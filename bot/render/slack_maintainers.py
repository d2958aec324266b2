"""The App Home sections only maintainers (tracebot admins) see: entries people keep rejecting, and the
errors pasted that nothing answered. Both come from ``tracebot stats``; these are its Slack view."""

from __future__ import annotations

import time
from typing import Any

from tracebot.render.slack import context, escape, section

Block = dict[str, Any]
TOP_GAPS = 5


def maintainer_blocks(*, flagged: list[Any], gaps: list[Any], threshold: float) -> list[Block]:
    blocks: list[Block] = [{"type": "divider"}, section("*For maintainers*")]
    blocks.append(section(f"*Entries below {threshold:.0%} helpful*"))
    if flagged:
        rows = [
            f"• `{escape(s.entry_id)}`: {s.helpful_rate:.0%} helpful ({s.not_this} not this of "
            f"{s.helpful + s.not_this} votes)"
            for s in flagged
        ]
        blocks.append(section("\n".join(rows)))
        blocks.append(context("`tracebot stats` lists the lines they were rejected on."))
    else:
        blocks.append(context("None: every entry with votes is mostly helpful."))
    blocks.append(section(f"*Top {TOP_GAPS} unanswered errors*"))
    if gaps:
        rows = []
        for g in gaps[:TOP_GAPS]:
            last = time.strftime("%Y-%m-%d", time.gmtime(g.last_seen))
            where = ", ".join(f"<#{c}>" for c in g.channels[:3])
            rows.append(f"• *{g.count}×* `{escape(g.key[:150])}`\n    {where} · last {last}")
        blocks.append(section("\n".join(rows)))
        blocks.append(context("`tracebot stats --unanswered` lists them all; save a thread's fix with *Save as knowledge*."))
    else:
        blocks.append(context("None yet: every error pasted got a confident answer."))
    return blocks
