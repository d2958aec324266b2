"""Block Kit rendered as plain text, so ``tracebot console`` shows exactly what Slack would get."""

from __future__ import annotations

import html
import re
from typing import Any

_LINK = re.compile(r"<([^|<>]+)\|([^<>]+)>")
_BARE_LINK = re.compile(r"<(https?://[^|<>]+)>")  # Slack shows the address itself
_MENTION = re.compile(r"<([@#])([A-Z0-9]+)>")


def mrkdwn(text: str) -> str:
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    text = _BARE_LINK.sub(lambda m: m.group(1), text)
    text = _MENTION.sub(lambda m: f"{m.group(1)}{m.group(2)}", text)
    return html.unescape(text)


def blocks_to_text(blocks: list[dict[str, Any]], fallback: str = "") -> str:
    if not blocks:
        return mrkdwn(fallback)
    out: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind in ("section", "header"):
            if isinstance(block.get("text"), dict):
                out.append(mrkdwn(block["text"].get("text", "")))
            out.extend(mrkdwn(f.get("text", "")) for f in block.get("fields", []))
        elif kind == "context":
            out.append("  " + " | ".join(mrkdwn(e.get("text", "")) for e in block.get("elements", [])))
        elif kind == "divider":
            out.append("-" * 40)
        elif kind == "actions":
            out.append(
                "  ".join(f"[{e.get('text', {}).get('text', '?')}]" for e in block.get("elements", []))
            )
        else:
            out.append(f"<{kind} block>")
    return "\n".join(out)
