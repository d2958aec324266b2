"""The built-in ``/trace`` commands that answer at once: ``kb`` search and per-channel ``config``."""

from __future__ import annotations

from typing import Any

from tracebot.plugin_api import Caller
from tracebot.result import Result, Section, Table


def kb_search(knowledge: Any, query: str) -> Result:
    kb = knowledge.kb
    if not query.strip():
        tags: dict[str, int] = {}
        for e in kb.entries:
            for t in e.tags or ["untagged"]:
                tags[t] = tags.get(t, 0) + 1
        rows = [[t, str(n)] for t, n in sorted(tags.items())]
        return Result(
            title="/trace kb",
            summary=f"{len(kb.entries)} entries. Search with `/trace kb <words>`.",
            status="info",
            tables=[Table("Entries by tag", ["tag", "entries"], rows)],
        )
    found = knowledge.matcher.search(query, limit=5)
    if not found:
        return Result(title=f"/trace kb {query}", summary="No entry matches those words.", status="info")
    sections = []
    for m in found:
        entry = kb.get(m.entry_id)
        summary = entry.summary if entry is not None else ""
        fix = f"\nFix: {entry.fix[0]}" if entry is not None and entry.fix else ""
        sections.append(Section(f"{m.title} ({m.entry_id})", f"{summary}{fix}"))
    return Result(
        title=f"/trace kb {query}", summary=f"{len(found)} entries found.", status="info", sections=sections
    )


def _on_off(word: str) -> bool:
    if word.lower() in ("on", "true", "yes", "1"):
        return True
    if word.lower() in ("off", "false", "no", "0"):
        return False
    raise ValueError(f"expected on or off, got {word[:20]!r}")


def config(store: Any, cfg: Any, caller: Caller, channel: str, args: list[str]) -> Result:
    """Show or change the channel's settings. Admins only (``TRACEBOT_ADMINS`` / the config file)."""
    if not caller.is_admin:
        return Result(
            title="/trace config",
            summary="Only tracebot admins can view or change channel settings.",
            status="error",
            data={"error": "not_allowed"},
        )
    changes: dict[str, Any] = {}
    try:
        pairs = list(zip(args[::2], args[1::2], strict=False))
        if len(args) % 2:
            raise ValueError(f"`{args[-1][:20]}` needs a value")
        for key, value in pairs:
            if key.lower() in ("auto-reply", "autoreply", "auto_reply"):
                changes["auto_reply"] = _on_off(value)
            elif key.lower() == "threshold":
                threshold = float(value)
                if not 0 <= threshold <= 100:
                    raise ValueError("threshold must be between 0 and 100")
                changes["threshold"] = threshold
            else:
                raise ValueError(f"unknown setting `{key[:30]}`")
    except ValueError as exc:
        return Result(
            title="/trace config",
            summary=f"{exc}. Usage: `/trace config [auto-reply on|off] [threshold N]`",
            status="error",
            data={"error": "usage"},
        )
    settings = (
        store.update_channel_settings(channel, updated_by=caller.slack_user or "?", **changes)
        if changes
        else store.channel_settings(channel)
    )
    threshold = settings.threshold if settings.threshold is not None else cfg.confidence_threshold
    rows = [
        ["auto-reply", "on" if settings.auto_reply else "off"],
        ["threshold", f"{threshold:g}" + ("" if settings.threshold is not None else " (default)")],
    ]
    return Result(
        title="/trace config",
        summary="Updated." if changes else "Settings for this channel.",
        status="ok" if changes else "info",
        tables=[Table("Channel settings", ["setting", "value"], rows)],
        data={"auto_reply": settings.auto_reply, "threshold": threshold},
    )
