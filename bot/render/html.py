"""A conversation as an HTML page that approximates Slack's rendering in a ~600 px thread pane.

A view of the Block Kit payloads :mod:`tracebot.render.slack` produces (the same dicts tracebot sends to
Slack), so the page shows what Slack would get: sections (mrkdwn, fields, accessory button), context,
actions, dividers, headers, code blocks, file cards. ``tracebot console --html FILE`` writes it.

Everything in a payload is text from a user or a job: mrkdwn is parsed into a few safe tags and every
piece of text is HTML-escaped; links keep only http(s) URLs; the page forbids scripts (its CSP), so even
a rendering bug cannot run anything.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from tracebot.sizes import size_text

Block = dict[str, Any]

PANE_PX = 600  # Slack's thread pane on a laptop screen
CSP_META = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
)
# Slack shows these as emoji; the rest of :shortcodes: stay as text.
EMOJI = {
    "x": "❌", "white_check_mark": "✅", "warning": "⚠️", "information_source": "ℹ️", "mag": "🔍",
    "hourglass": "⌛", "hourglass_flowing_sand": "⏳", "bulb": "💡", "point_right": "👉", "lock": "🔒",
}


@dataclass
class FileCard:
    filename: str
    title: str
    size: int


@dataclass
class Shown:
    """One message as a reader of the channel (or, for an ephemeral, its one recipient) sees it."""

    author: str  # "tracebot" or a user id
    ts: str
    text: str = ""  # the fallback text; shown only when there are no blocks
    blocks: list[Block] = field(default_factory=list)
    thread_ts: str | None = None
    only_visible_to: str | None = None  # an ephemeral message
    files: list[FileCard] = field(default_factory=list)
    edited: bool = False
    plain: bool = False  # a person's message: shown as typed (mrkdwn is not applied to a pasted log)


# -- mrkdwn ------------------------------------------------------------------------------------------------
_FENCE = re.compile(r"```(.*?)```", re.S)
_INLINE = re.compile(
    r"<(?P<link>[^<>\s|][^<>|]*)(?:\|(?P<label>[^<>]*))?>"
    r"|`(?P<code>[^`\n]+)`"
    r"|(?<![\w*])\*(?P<bold>[^*\n]+)\*(?![\w*])"
    r"|(?<![\w_])_(?P<italic>[^_\n]+)_(?![\w_])"
    r"|(?<![\w~])~(?P<strike>[^~\n]+)~(?![\w~])"
    r"|:(?P<emoji>[a-z0-9_+-]+):"
)


def _unslack(text: str) -> str:
    """Slack's three entities back to characters (then :func:`html.escape` makes them safe again)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _text(text: str) -> str:
    return html.escape(_unslack(text))


def _link(target: str, label: str | None) -> str:
    if target.startswith(("@", "#")):  # <@U123>, <#C123>
        return f'<span class="mention">{_text(label or target)}</span>'
    if target.startswith("!"):  # <!here> and friends: tracebot defuses them, but show what it would be
        return f'<span class="mention">@{_text((label or target[1:]).split("^")[0])}</span>'
    url = _unslack(target)
    shown = _text(label) if label else html.escape(url)
    if re.match(r"https?://", url):
        return f'<a href="{html.escape(url, quote=True)}">{shown}</a>'
    return f'<span class="link">{shown}</span>'


def inline(text: str) -> str:
    """One run of mrkdwn without code fences, as HTML."""
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        out.append(_text(text[pos : m.start()]))
        pos = m.end()
        if m.group("link") is not None:
            out.append(_link(m.group("link"), m.group("label")))
        elif m.group("code") is not None:
            out.append(f"<code>{_text(m.group('code'))}</code>")
        elif m.group("bold") is not None:
            out.append(f"<b>{inline(m.group('bold'))}</b>")
        elif m.group("italic") is not None:
            out.append(f"<i>{inline(m.group('italic'))}</i>")
        elif m.group("strike") is not None:
            out.append(f"<s>{inline(m.group('strike'))}</s>")
        else:
            name = m.group("emoji")
            out.append(EMOJI[name] if name in EMOJI else _text(m.group(0)))
    out.append(_text(text[pos:]))
    return "".join(out)


def mrkdwn(text: str) -> str:
    """Slack mrkdwn as HTML: code fences become blocks, every other line a ``.ln`` of its own (so a
    reader, and a test, can find the first step of a list)."""
    parts: list[str] = []
    pos = 0
    for m in _FENCE.finditer(text):
        parts.append(_lines(text[pos : m.start()]))
        parts.append(f"<pre>{_text(m.group(1).strip(chr(10)))}</pre>")
        pos = m.end()
    parts.append(_lines(text[pos:]))
    return "".join(parts)


def _lines(text: str) -> str:
    text = text.strip("\n")
    if not text:
        return ""
    return "".join(f'<div class="ln">{inline(line) or "&nbsp;"}</div>' for line in text.split("\n"))


def _plain(text: str) -> str:
    return "".join(f'<div class="ln">{html.escape(line) or "&nbsp;"}</div>' for line in text.split("\n"))


def _text_object(obj: dict[str, Any] | None) -> str:
    if not obj:
        return ""
    raw = str(obj.get("text", ""))
    return mrkdwn(raw) if obj.get("type") == "mrkdwn" else _plain(raw)


# -- blocks ------------------------------------------------------------------------------------------------
def _button(element: dict[str, Any]) -> str:
    style = element.get("style")
    cls = f"btn {html.escape(style)}" if style in ("primary", "danger") else "btn"
    label = html.escape(str((element.get("text") or {}).get("text", "")))
    return f'<span class="{cls}">{label}</span>'


def _element(element: dict[str, Any]) -> str:
    kind = element.get("type")
    if kind == "button":
        return _button(element)
    if kind == "image":
        return f'<span class="img">[{html.escape(str(element.get("alt_text", "image")))}]</span>'
    if kind in ("mrkdwn", "plain_text"):
        return f"<span>{_text_object(element)}</span>"
    return f'<span class="unknown">[{html.escape(str(kind))}]</span>'


def block(b: Block) -> str:
    kind = str(b.get("type", ""))
    attrs = f' data-block-id="{html.escape(str(b["block_id"]), quote=True)}"' if b.get("block_id") else ""
    if kind == "section":
        body = _text_object(b.get("text"))
        if b.get("fields"):
            body += '<div class="fields">' + "".join(
                f'<div class="field">{_text_object(f)}</div>' for f in b["fields"]
            ) + "</div>"
        accessory = b.get("accessory")
        if accessory:
            body = f'<div class="with-accessory"><div>{body}</div>{_element(accessory)}</div>'
        return f'<div class="block section"{attrs}>{body}</div>'
    if kind == "context":
        items = "".join(_element(e) for e in b.get("elements", []))
        return f'<div class="block context"{attrs}>{items}</div>'
    if kind == "actions":
        items = "".join(_element(e) for e in b.get("elements", []))
        return f'<div class="block actions"{attrs}>{items}</div>'
    if kind == "divider":
        return f'<hr class="block divider"{attrs}>'
    if kind == "header":
        return f'<div class="block header"{attrs}>{_plain(str((b.get("text") or {}).get("text", "")))}</div>'
    if kind == "image":
        return f'<div class="block image"{attrs}>[{html.escape(str(b.get("alt_text", "image")))}]</div>'
    return f'<div class="block unknown"{attrs}>[{html.escape(kind)} block]</div>'


def _file(card: FileCard) -> str:
    ext = card.filename.rsplit(".", 1)[-1].upper() if "." in card.filename else "FILE"
    return (
        f'<div class="file"><span class="icon">{html.escape(ext[:4])}</span><span class="meta">'
        f"<b>{html.escape(card.title or card.filename)}</b>"
        f'<span class="sub">{html.escape(card.filename)} · {size_text(card.size)}</span></span></div>'
    )


def message(m: Shown, index: int) -> str:
    bot = m.author == "tracebot"
    name = "tracebot" if bot else m.author
    badge = '<span class="app">APP</span>' if bot else ""
    note = ""
    if m.only_visible_to:
        note = f'<div class="only">Only visible to {html.escape(m.only_visible_to)}</div>'
    if m.blocks:
        body = "".join(block(b) for b in m.blocks)
    elif m.text:
        body = f'<div class="block section">{_plain(m.text) if m.plain else mrkdwn(m.text)}</div>'
    else:
        body = ""
    body += "".join(_file(f) for f in m.files)
    thread = f' data-thread="{html.escape(m.thread_ts, quote=True)}"' if m.thread_ts else ""
    cls = "msg" + (" ephemeral" if m.only_visible_to else "") + (" bot" if bot else "")
    edited = ' <span class="edited">(edited)</span>' if m.edited else ""
    return (
        f'<div class="{cls}" id="m{index}" data-ts="{html.escape(m.ts, quote=True)}"{thread}>'
        f'<div class="avatar">{html.escape(name[:1].upper())}</div><div class="content">{note}'
        f'<div class="who"><b>{html.escape(name)}</b>{badge}<span class="ts">{html.escape(m.ts)}</span></div>'
        f"{body}{edited}</div></div>"
    )


STYLE = f"""
body {{ margin: 0; background: #fff; color: #1d1c1d; width: {PANE_PX}px;
  font: 15px/22px Lato, "Noto Sans", "Noto Sans CJK JP", "DejaVu Sans", sans-serif; }}
.pane-title {{ height: 49px; box-sizing: border-box; padding: 12px 16px; border-bottom: 1px solid #ddd;
  font-weight: 900; font-size: 18px; }}
.msg {{ display: flex; padding: 8px 20px 8px 16px; }}
.msg.ephemeral {{ background: #f8f8f8; }}
.avatar {{ flex: 0 0 36px; height: 36px; margin-right: 8px; border-radius: 4px; background: #4a154b;
  color: #fff; text-align: center; line-height: 36px; font-weight: 700; }}
.msg:not(.bot) .avatar {{ background: #2bac76; }}
.content {{ flex: 1; min-width: 0; overflow-wrap: anywhere; }}
.who b {{ font-weight: 900; }}
.app {{ font-size: 10px; background: #e8e8e8; color: #616061; border-radius: 2px; padding: 0 3px;
  margin-left: 4px; vertical-align: 1px; }}
.ts {{ color: #616061; font-size: 12px; margin-left: 6px; }}
.only {{ color: #616061; font-size: 13px; }}
.block {{ margin: 4px 0; }}
.ln {{ white-space: pre-wrap; }}
code {{ font: 12px/18px Monaco, Menlo, "DejaVu Sans Mono", monospace; color: #e01e5a; background: #f6f6f6;
  border: 1px solid #ddd; border-radius: 3px; padding: 2px 3px; }}
pre {{ font: 12px/18px Monaco, Menlo, "DejaVu Sans Mono", monospace; background: #f8f8f8; margin: 4px 0;
  border: 1px solid #ddd; border-radius: 4px; padding: 8px; white-space: pre-wrap; }}
a, .link {{ color: #1264a3; text-decoration: none; }}
.mention {{ color: #1264a3; background: #e8f5fa; border-radius: 3px; padding: 0 2px; }}
.context {{ color: #616061; font-size: 12px; line-height: 18px; display: flex; flex-wrap: wrap; gap: 0 8px; }}
.context code {{ font-size: 11px; padding: 0 2px; }}
.fields {{ display: grid; grid-template-columns: 1fr 1fr; gap: 8px 16px; margin-top: 4px; }}
.with-accessory {{ display: flex; justify-content: space-between; gap: 8px; }}
.actions {{ display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }}
.btn {{ display: inline-block; height: 28px; line-height: 26px; box-sizing: border-box; padding: 0 12px;
  border: 1px solid #ccc; border-radius: 4px; font-size: 13px; font-weight: 700; white-space: nowrap; }}
.btn.primary {{ background: #007a5a; border-color: #007a5a; color: #fff; }}
.btn.danger {{ background: #e01e5a; border-color: #e01e5a; color: #fff; }}
.divider {{ border: 0; border-top: 1px solid #ddd; }}
.header {{ font-size: 18px; font-weight: 900; line-height: 26px; }}
.file {{ display: flex; align-items: center; border: 1px solid #ddd; border-radius: 8px; padding: 12px;
  margin: 4px 0; max-width: 420px; }}
.file .icon {{ flex: 0 0 40px; height: 40px; line-height: 40px; border-radius: 6px; background: #1264a3;
  color: #fff; font-size: 11px; font-weight: 700; text-align: center; margin-right: 12px; }}
.file .meta {{ display: flex; flex-direction: column; min-width: 0; }}
.file .sub {{ color: #616061; font-size: 13px; }}
.edited {{ color: #616061; font-size: 12px; }}
"""


def page(messages: list[Shown], title: str = "tracebot console") -> str:
    """The whole conversation as one HTML document (UTF-8)."""
    body = "".join(message(m, i) for i, m in enumerate(messages))
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8">{CSP_META}'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f'<body><div class="pane-title">Thread</div>{body}</body></html>\n'
    )
