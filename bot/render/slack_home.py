"""The App Home tab: what tracebot knows, recent diagnoses, the most helpful entries, load errors,
storage errors."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from tracebot.render.slack import context, escape, inline_code, section
from tracebot.render.slack_limits import MAX_BLOCKS, fit_section

Block = dict[str, Any]
HOME_BLOCKS = 100  # Slack allows 100 blocks in a Home tab view (50 in a message)
# A Home tab has no thread to attach a file to: what is cut says where the rest is.
MORE_ENTRIES = "\n… `/trace kb <words>` searches every entry"
MORE_ERRORS = "\n… the rest are in tracebot's log"
# What a viewer who is not an admin sees of them: the details name server paths, database files and
# plugin tracebacks, which are the operator's business.
KB_PROBLEM = ":warning: The knowledge base has a problem; admins see the details here."
PLUGIN_PROBLEM = ":warning: A `/trace` plugin did not load; admins see the details here."
STORAGE_PROBLEM = ":warning: tracebot's storage has a problem (answers are still posted); admins see the details here."
UNDELIVERED_PROBLEM = ":warning: Slack could not be reached for long enough that tracebot gave up on some answers; admins see the details here."


def home_view(
    *,
    kb: Any,
    recent: list[Any],
    helpful: list[Any],
    kb_errors: list[Any],
    plugin_errors: list[str],
    storage_errors: list[str] | None = None,
    admin: bool = False,
    undelivered: list[str] | None = None,
) -> dict[str, Any]:
    """The tab for one viewer; the load and storage errors' details only for an ``admin``."""
    blocks: list[Block] = [{"type": "header", "text": {"type": "plain_text", "text": "tracebot"}}]
    entries = list(getattr(kb, "entries", []) or [])
    by_tag: dict[str, list[str]] = defaultdict(list)
    for e in entries:
        for tag in e.tags or ["untagged"]:
            by_tag[tag].append(e.title)
    lines = [
        f"*{escape(tag)}* ({len(titles)}): "
        + escape(", ".join(sorted(titles)[:8]))
        + (" …" if len(titles) > 8 else "")
        for tag, titles in sorted(by_tag.items())
    ]
    blocks.append(section(f"*What I know* — {len(entries)} entries"))
    blocks.append(section(fit_section("\n".join(lines) or "No entries loaded.", MORE_ENTRIES)))
    blocks.append({"type": "divider"})
    blocks.append(section("*Recent diagnoses*"))
    if recent:
        rows = []
        for d in recent:
            best = d.matches[0].title if d.matches else "no match"
            ago = _ago(d.created_at)
            rows.append(f"<#{d.channel}> · {escape(best)} · {d.source} · {ago}")
        blocks.append(section("\n".join(rows)))
    else:
        blocks.append(context("None yet. Paste an error in a channel I'm in, or mention me."))
    blocks.append(section("*Most helpful entries*"))
    if helpful:
        blocks.append(
            section(
                "\n".join(
                    f"{escape(s.entry_id)}: {s.helpful} helpful of {s.helpful + s.not_this} votes"
                    for s in helpful
                )
            )
        )
    else:
        blocks.append(context("No feedback yet."))
    if admin:
        blocks.extend(_error_details([str(e) for e in kb_errors] + list(plugin_errors), storage_errors or []))
        if undelivered:
            blocks.append({"type": "divider"})
            blocks.append(section(
                f":warning: *Answers given up on* ({len(undelivered)}, newest first) — Slack could not be reached "
                "to post them nor to apologise, for as long as work may wait (`TRACEBOT_REPLAY_MAX_AGE_S`)"
            ))
            blocks.append(section(fit_section("\n".join(f"• {inline_code(e)}" for e in undelivered), MORE_ERRORS)))
    else:
        problems = [KB_PROBLEM] * bool(kb_errors) + [PLUGIN_PROBLEM] * bool(plugin_errors)
        problems += [STORAGE_PROBLEM] * bool(storage_errors) + [UNDELIVERED_PROBLEM] * bool(undelivered)
        if problems:
            blocks.append({"type": "divider"})
            blocks.extend(context(line) for line in problems)
    return {"type": "home", "blocks": blocks[: min(HOME_BLOCKS, MAX_BLOCKS * 2)]}


def _error_details(errors: list[str], storage_errors: list[str]) -> list[Block]:
    blocks: list[Block] = []
    if errors:
        blocks.append({"type": "divider"})
        blocks.append(
            section(f":warning: *Load errors* ({len(errors)}) — the last good knowledge base is in use")
        )
        blocks.append(section(fit_section("\n".join(f"• {inline_code(e)}" for e in errors), MORE_ERRORS)))
    if storage_errors:
        blocks.append({"type": "divider"})
        blocks.append(
            section(
                f":warning: *Storage errors* ({len(storage_errors)}, newest first) — answers are still "
                "posted, but these were not recorded"
            )
        )
        blocks.append(section(fit_section("\n".join(f"• {inline_code(e)}" for e in storage_errors), MORE_ERRORS)))
    return blocks


def _ago(ts: float) -> str:
    s = max(0, int(time.time() - ts))
    if s < 120:
        return f"{s}s ago"
    if s < 7200:
        return f"{s // 60} min ago"
    return f"{s // 3600} h ago" if s < 172800 else f"{s // 86400} days ago"
