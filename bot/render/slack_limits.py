"""Slack's message limits, and fitting a rendered message inside them.

Slack refuses a message with a section text over 3,000 characters, more than 50 blocks, or a ``text``
over 40,000 characters. We cut at line boundaries, say where we cut, and report that the message
overflowed so the caller uploads the full text as a file in the thread (``files_upload_v2``). A reply no
file can follow (a slash command's acknowledgement, an ephemeral) is cut with ``rest=NOT_SHOWN``: its
marks say it was cut, and promise nothing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

SECTION_CHARS = 3000
MAX_BLOCKS = 50
MESSAGE_CHARS = 40000
# Where the rest of a cut message is: a posted message is followed by a file in its thread; a reply only
# its asker sees (an ephemeral, a slash command's ack, a shortcut's response_url) can carry no file.
IN_FILE = "is in the attached file"
NOT_SHOWN = "did not fit in Slack's limit (a reply only you see cannot carry a file)"
_MARK = f"\n… (cut; the full text {IN_FILE})"
BLOCKS_TOTAL_CHARS = 38000  # room kept for our own "(cut …)" marker within the blocks' combined size

Block = dict[str, Any]


@dataclass
class Fitted:
    text: str
    blocks: list[Block]
    overflowed: bool


def cut(text: str, limit: int, mark: str = _MARK) -> tuple[str, bool]:
    """``text`` shortened to ``limit`` characters at a line break where possible, with ``mark`` appended."""
    if len(text) <= limit:
        return text, False
    room = max(0, limit - len(mark))
    head = text[:room]
    newline = head.rfind("\n")
    if newline > room // 2:
        head = head[:newline]
    if head.count("```") % 2 == 1:  # never leave a code block open: Slack would render the rest as code
        head = head[: max(0, room - 4)].rstrip() + "\n```"
        head = head[:room]
    return head + mark, True


def fit_section(text: str, more: str) -> str:
    """``text`` as one section's text: cut at a line to Slack's 3,000 characters, ``more`` saying where the
    rest is (a view with no thread to attach a file to, such as the App Home)."""
    return cut(text, SECTION_CHARS, more)[0]


def _text_fields(block: Block) -> list[dict[str, Any]]:
    fields = []
    if isinstance(block.get("text"), dict):
        fields.append(block["text"])
    fields.extend(f for f in block.get("fields", []) if isinstance(f, dict))
    if block.get("type") == "context":
        fields.extend(e for e in block.get("elements", []) if isinstance(e, dict) and "text" in e)
    return fields


def block_chars(block: Block) -> int:
    return sum(len(f.get("text", "")) for f in _text_fields(block))


def fit(text: str, blocks: list[Block], rest: str = IN_FILE) -> Fitted:
    """Fit ``text`` and ``blocks`` into Slack's limits; ``overflowed`` means something was cut. ``rest``
    says where what was cut is (:data:`IN_FILE`, :data:`NOT_SHOWN`)."""
    mark = f"\n… (cut; the full text {rest})"
    blocks = copy.deepcopy(blocks)
    overflowed = False
    for block in blocks:
        for field in _text_fields(block):
            limit = SECTION_CHARS if block.get("type") != "header" else 150
            field["text"], was_cut = cut(field.get("text", ""), limit, mark)
            overflowed |= was_cut
    # Actions stay last (the buttons matter even when the body is cut).
    actions = [b for b in blocks if b.get("type") == "actions"]
    body = [b for b in blocks if b.get("type") != "actions"]
    room = MAX_BLOCKS - len(actions)
    kept: list[Block] = []
    total = 0
    for i, block in enumerate(body):
        size = block_chars(block)
        if len(kept) >= room - 1 and i < len(body) - 1 or total + size > BLOCKS_TOTAL_CHARS:
            dropped = len(body) - i
            kept.append(_note(f"… {dropped} more part(s): the full text {rest}."))
            overflowed = True
            break
        kept.append(block)
        total += size
    text, text_cut = cut(text, MESSAGE_CHARS, mark)
    return Fitted(text, kept + actions, overflowed or text_cut)


def layout_free(text: str, blocks: list[Block]) -> str:
    """What ``blocks`` say as one mrkdwn text, without their layout and buttons: the message Slack takes
    when it refuses the blocks themselves. Each text is already mrkdwn (user text escaped in it)."""
    said = [f["text"] for b in blocks if b.get("type") != "actions" for f in _text_fields(b) if f.get("text")]
    return "\n".join(said) or text


def _note(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
