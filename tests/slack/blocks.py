"""Reading what tracebot posted: all the text in a message's blocks, and its buttons."""

from __future__ import annotations

from typing import Any


def texts(blocks: list[dict[str, Any]]) -> str:
    out = []
    for b in blocks or []:
        if isinstance(b.get("text"), dict):
            out.append(b["text"].get("text", ""))
        for e in b.get("elements", []):
            t = e.get("text")
            out.append(t if isinstance(t, str) else (t or {}).get("text", ""))
    return "\n".join(out)


def buttons(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["text"]["text"]: e for b in blocks or [] if b["type"] == "actions" for e in b["elements"]}
