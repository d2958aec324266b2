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


# Slack's documented Block Kit limits (docs.slack.dev/reference/block-kit/blocks/section-block, context-block,
# header-block; block-elements/button-element): a payload past one is refused whole (``invalid_blocks``).
SECTION_TEXT, FIELD_TEXT, FIELDS, CONTEXT_ELEMENTS, HEADER_TEXT, BUTTON_TEXT, BUTTON_VALUE = (
    3000, 2000, 10, 10, 150, 75, 2000)


def over_slack_limits(blocks: list[dict[str, Any]], max_blocks: int = 50) -> list[str]:
    """What Slack would refuse in ``blocks`` (a message allows 50 blocks, a Home tab or modal 100); [] when none."""
    out = [f"{len(blocks)} blocks (at most {max_blocks})"] if len(blocks) > max_blocks else []
    for i, b in enumerate(blocks):
        text = b.get("text") if isinstance(b.get("text"), dict) else {}
        limit = HEADER_TEXT if b["type"] == "header" else SECTION_TEXT
        if len(text.get("text", "")) > limit:
            out.append(f"block {i} ({b['type']}): text of {len(text['text'])} characters (at most {limit})")
        if b["type"] == "section" and not (text.get("text", "").strip() or b.get("fields")):
            out.append(f"block {i} (section): empty")
        fields = b.get("fields", [])
        out += [f"block {i}: {len(fields)} fields"] if len(fields) > FIELDS else []
        out += [f"block {i}: a field of {len(f['text'])} characters" for f in fields if len(f["text"]) > FIELD_TEXT]
        elements = b.get("elements", [])
        if b["type"] == "context":
            out += [f"block {i} (context): {len(elements)} elements"] if not 0 < len(elements) <= CONTEXT_ELEMENTS else []
            out += [f"block {i} (context): an element of {len(e.get('text', ''))} characters"
                    for e in elements if not 0 < len(e.get("text", "")) <= SECTION_TEXT]
        if b["type"] == "actions":
            out += [f"block {i}: a button label of {len(e['text']['text'])} characters"
                    for e in elements if len(e["text"]["text"]) > BUTTON_TEXT]
            out += [f"block {i}: a button value of {len(e.get('value', ''))} characters"
                    for e in elements if len(e.get("value", "")) > BUTTON_VALUE]
    return out
