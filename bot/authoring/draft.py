"""Draft a knowledge entry from a pasted error (``tracebot kb new ID --from FILE``).

The draft is a starting point for a human: its signatures are regexes built from the most distinctive
lines of the snippet (exception lines, ``Error:`` lines, NCCL WARN lines), with the parts the matcher
masks (numbers, hex, paths, IPs, ids) turned into bounded classes, so the draft fires on the same error
with another rank, PID or path. Cause, fix and source are left as ``TODO`` for the author; ``kb lint``
names every TODO with its file and line until they are filled in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tracebot.authoring.inputs import NotAFile, read_input
from tracebot.knowledge.entry import ID_RE, MAX_EXAMPLE_CHARS, MAX_PATTERN_CHARS, Entry
from tracebot.knowledge.loader import entry_files, parse_entry_text

# The matcher's own masks, applied in the matcher's order, so a draft generalises over exactly the
# parts the matcher treats as variable (bot/matcher/normalize.py::mask).
from tracebot.matcher.normalize import HEX, IP, LONG_ID, NUMBER, PATH, clean, mask, to_text
from tracebot.matcher.signals import GLOG_PREFIX as _GLOG_PREFIX
from tracebot.matcher.signals import NOISE as _NOISE
from tracebot.matcher.signals import line_score
from tracebot.secrets import REDACTED

MAX_SIGNATURES = 3
REGEX_SOURCE_CHARS = 160  # a signature covers the start of a long line: enough to be specific
CLAUSE_MIN_CHARS = 60
_CLAUSE_BREAK = re.compile(r"[(,;]")
MAX_SNIPPET_READ = 8 << 20
CONTEXT_LINES = 15  # kept around the chosen lines of a long paste
TODO = "TODO"

_MASKS: list[tuple[re.Pattern[str], str]] = [
    # what the scrubber took out (a thread's token, a password): the draft is made from scrubbed text, and a
    # literal "\[redacted\]" would match no paste, only the draft's own example
    (re.compile(re.escape(REDACTED)), r"\S+"),
    (HEX, r"0x[0-9a-f]+"),
    (IP, r"[0-9a-f.:\[\]]+"),
    (PATH, r"\S+"),
    (LONG_ID, r"[0-9a-f-]+"),
    # sizes: the amount and its unit change together ("3.91 GiB", "20.00 MiB", "512 bytes")
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:[KMGT]i?B|bytes)\b"), r"\d+(?:\.\d+)? ?[kmgt]?i?b(?:ytes)?"),
    (NUMBER, ""),  # integers become \d+, decimals \d+\.\d+ (see _number_class)
    # enum-like values (OpType=ALLREDUCE) vary between occurrences of the same failure
    (re.compile(r"(?<==)[A-Z][A-Z0-9_]+\b"), r"\w+"),
]
_RE2_SPECIAL = set("\\.^$|?*+()[]{}")


@dataclass(frozen=True)
class Signature:
    """One chosen line of a snippet and the regex drafted from it."""

    line_no: int  # 1-based line in the snippet
    text: str  # the cleaned line
    regex: str
    score: int


def _escape(literal: str) -> str:
    return "".join("\\" + c if c in _RE2_SPECIAL else c for c in literal)


def _number_class(token: str) -> str:
    return r"\d+\.\d+" if "." in token else r"\d+"


def _path_class(path: str) -> str:
    """Directories vary between machines; a long, digit-free file name is what the error is about
    (``metadata.json.sagemaker-uploading``), so it stays literal."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if len(name) >= 12 and not any(c.isdigit() for c in name):
        return r"\S*/" + _escape(name)
    return r"\S+"


def line_to_regex(text: str, max_source_chars: int = REGEX_SOURCE_CHARS) -> str:
    """An RE2 regex for one cleaned line: literal text escaped, masked parts as bounded classes.

    The regex stops at the first clause break (``(``, ``,``, ``;``) after ``CLAUSE_MIN_CHARS``: what
    follows is usually detail that varies between occurrences (operation, sizes, devices, hints), and
    the head of the message is what names the failure. Long lines are cut at a word boundary near
    ``max_source_chars`` in any case; the regex is a search, so the cut part simply stops mattering.
    """
    text = _GLOG_PREFIX.sub("", text).strip()
    clause = _CLAUSE_BREAK.search(text, CLAUSE_MIN_CHARS)
    if clause:
        text = text[: clause.start()].rstrip(" :")
    if len(text) > max_source_chars:
        cut = text.rfind(" ", 0, max_source_chars)
        text = text[: cut if cut > max_source_chars // 2 else max_source_chars].rstrip(" ,;:(")
    # Mark variable spans in the matcher's order; earlier masks win, like successive substitutions.
    spans: list[tuple[int, int, str]] = []
    taken = [False] * len(text)
    for pattern, cls in _MASKS:
        for m in pattern.finditer(text):
            if m.start() == m.end() or any(taken[m.start() : m.end()]):
                continue
            spans.append((m.start(), m.end(), cls or _number_class(m.group())))
            if pattern is PATH:
                spans[-1] = (m.start(), m.end(), _path_class(m.group()))
            for i in range(m.start(), m.end()):
                taken[i] = True
    spans.sort()
    out: list[str] = []
    pos = 0
    for start, end, cls in spans:
        out.append(_escape(text[pos:start]))
        out.append(cls)
        pos = end
    out.append(_escape(text[pos:]))
    regex = re.sub(r" {2,}", " +", "".join(out))
    return (
        regex[:MAX_PATTERN_CHARS]
        if len(regex) <= MAX_PATTERN_CHARS
        else line_to_regex(text, max_source_chars // 2)
    )


_FRAME = re.compile(r'^File "[^"]*", line \d+')  # a Python traceback's frame (its source line follows)
_CARETS = re.compile(r"^[\s~^]*$")  # Python 3.11's markers under a frame's source line


def _indent(raw: str, text: str) -> int:
    """How far ``text`` (``raw`` cleaned) is indented in ``raw`` after its prefixes (rank, host, time)."""
    at = raw.find(text) if text else -1
    if at <= 0:
        return 0
    return at - len(raw[:at].rstrip(" \t"))


def pick_signatures(snippet: str, limit: int = MAX_SIGNATURES) -> list[Signature]:
    """The most distinctive 1-``limit`` lines of a snippet, in snippet order, each with its regex.

    Lines are compared after cleaning (prefixes, timestamps, ranks and hosts removed) and masking, so
    the same message from 64 ranks counts once. A traceback frame's source line is code, never a
    signature. When nothing looks like an error, the line a Python traceback ends with (what was raised,
    ``fluxlib.errors.FluxBufferUnderrun: …``) is used, else the first non-noise line (in a stack dump, the
    frame a thread is stuck in), so every draft has at least one signature.
    """
    seen: set[str] = set()
    candidates: list[tuple[int, int, str]] = []
    fallback: tuple[int, int, str] | None = None
    raised: tuple[int, int, str] | None = None  # the line that ends a Python traceback: what was raised
    frame_indent: int | None = None  # indentation of the traceback frame just read (its source follows)
    for i, raw in enumerate(to_text(snippet).splitlines(), start=1):
        text = clean(raw).text
        indent = _indent(raw, text)
        if _FRAME.search(text):
            frame_indent = indent
            continue
        if frame_indent is not None and text and not _CARETS.match(text):
            source = indent > frame_indent  # a frame's source line is indented under it; the exception is not
            frame_indent = None
            if source:
                continue  # code, not the statement of an error (nor a fallback for one)
            if raised is None and len(text) >= 12:
                raised = (0, i, text)
        key = mask(_GLOG_PREFIX.sub("", text))
        if not text or key in seen:
            continue
        seen.add(key)
        score = line_score(text)
        if score:
            candidates.append((score, i, text))
        elif len(text) >= 12 and not any(p.search(text) for p in _NOISE) and fallback is None:
            fallback = (0, i, text)
    if not candidates and (raised or fallback):
        candidates = [raised or fallback]  # type: ignore[list-item]
    best = sorted(candidates, key=lambda c: (-c[0], c[1]))[:limit]
    # A weak line only earns a place next to a strong one if it is itself clearly an error.
    top = best[0][0] if best else 0
    chosen = [c for c in best if c is best[0] or c[0] >= min(top, 4)]
    regexes: set[str] = set()
    out = []
    for score, line_no, text in sorted(chosen, key=lambda c: c[1]):
        regex = line_to_regex(text)
        if regex.lower() not in regexes:
            regexes.add(regex.lower())
            out.append(Signature(line_no, text, regex, score))
    return out


def trim_snippet(snippet: str, signatures: Sequence[Signature], context: int = CONTEXT_LINES) -> str:
    """The part of a long log worth keeping as an example: the signature lines with some context."""
    text = to_text(snippet).strip("\n")
    if len(text) <= MAX_EXAMPLE_CHARS // 4 or not signatures:
        return text[: MAX_EXAMPLE_CHARS // 4]
    lines = text.splitlines()
    first = max(0, signatures[0].line_no - 1 - context)
    last = min(len(lines), signatures[-1].line_no + context)
    kept = "\n".join(lines[first:last])
    return kept[: MAX_EXAMPLE_CHARS // 4]


# YAML refuses these raw (JSON leaves DEL and the C1 controls alone), so they are written as escapes.
_YAML_UNPRINTABLE = re.compile(r"[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _q(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML); keeps non-ASCII text readable."""
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def _sq(value: str) -> str:
    """A YAML single-quoted scalar: no escapes inside, which keeps regex backslashes as written."""
    return "'" + value.replace("'", "''") + "'"


def _block(value: str, indent: str) -> str:
    """A literal block scalar when it round-trips exactly, else a double-quoted one."""
    body = value[:-1] if value.endswith("\n") else value
    lines = body.split("\n")
    plain = (
        all(line == line.rstrip() and line.isprintable() for line in lines)
        and not value[:1].isspace()
        and not body.endswith("\n")
        and not _YAML_UNPRINTABLE.search(value)
    )
    if plain and value.strip():
        chomp = "|" if value.endswith("\n") else "|-"
        return chomp + "\n" + "\n".join(f"{indent}{line}" if line else "" for line in lines)
    return _q(value)


def render_entry(
    entry_id: str,
    *,
    title: str,
    signatures: Sequence[Signature] = (),
    examples: Iterable[str] = (),
    sources: Sequence[dict[str, str]] = (),
    note: str = "",
    tags: Sequence[str] = (),
    fix: Sequence[str] = (),
) -> str:
    """The YAML text of a draft entry. Unknown parts are ``TODO`` so ``kb lint`` points at them."""
    out: list[str] = []
    if note:
        out += [f"# {line}".rstrip() for line in note.splitlines()]
    out += [
        f"id: {entry_id}",
        f"title: {_q(title or TODO + ': one-line title shown as the reply heading')}",
        f"summary: {_q(TODO + ': one or two sentences, in your own words, about what happened')}",
        "role: root-cause",
        "priority: 50",
        f"tags: [{', '.join(tags)}]",
        "recognise:",
    ]
    if signatures:
        out.append("  regex:")
        out += [f"    - {_sq(s.regex)}   # from: {s.text[:70]!r}".rstrip() for s in signatures]
    else:
        out.append("  anchors:")
        out.append(f"    - {_q(TODO + ': literal error text users paste')}")
    out += [
        "  phrases: []",
        f"cause: {_q(TODO + ': why this happens, in your own words')}",
        "fix:",
        *([f"  - {_block(step, '    ')}" for step in fix] or [f"  - {_q(TODO + ': first thing to do, commands in `backticks`')}"]),
        "related: []",
        "trace: []",
        "sources:",
    ]
    if sources:
        for s in sources:
            keys = [k for k in ("doc", "section", "url") if k in s]
            out.append("  - " + "\n    ".join(f"{k}: {_q(s[k])}" for k in keys))
    else:
        out.append(f"  - url: {_q(TODO)}")
    out += ["examples:", "  match:"]
    shown = [e for e in examples if e.strip()]
    if shown:
        out += [f"    - {_block(e, '      ')}" for e in shown]
    else:
        out.append(f"    - {_q(TODO + ': paste a real error snippet that must match this entry')}")
    out += ["  no_match: []", "  todo_match: []", ""]
    return "\n".join(out)


def draft_from_snippet(
    entry_id: str,
    snippet: str,
    *,
    sources: Sequence[dict[str, str]] = (),
    title: str = "",
    note: str = "",
    fix: Sequence[str] = (),
) -> str:
    """Draft YAML for ``entry_id`` whose signatures come from ``snippet`` and whose first example it is."""
    signatures = pick_signatures(snippet)
    example = trim_snippet(snippet, signatures)
    return render_entry(
        entry_id, title=title, signatures=signatures, examples=[example], sources=sources, note=note, fix=fix
    )


def scaffold(entry_id: str) -> str:
    """An empty entry: every field present, every value a TODO."""
    return render_entry(entry_id, title="")


class DraftError(ValueError):
    """A draft that cannot be written; the message says why."""


def existing_entry(kb_root: Path, entry_id: str) -> Path | None:
    if not kb_root.is_dir():
        return None
    return next((p for p in entry_files(kb_root) if p.stem == entry_id), None)


def write_draft(kb_root: Path, entry_id: str, text: str, area: str = "") -> Path:
    """Write a draft to ``kb_root/[area/]ID.yaml``; refuses bad ids and never overwrites an entry."""
    target, _ = checked_draft(kb_root, entry_id, text, area)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("x", encoding="utf-8") as fh:
        fh.write(text)
    return target


def checked_draft(kb_root: Path, entry_id: str, text: str, area: str = "", shown: str = "") -> tuple[Path, Entry]:
    """Where the draft ``text`` of ``entry_id`` goes in ``kb_root`` and the entry it loads as (named as
    ``shown`` in its problems, default its path); :class:`DraftError` when the id or area is not a name,
    an entry already has the id, or the draft does not load back."""
    if not ID_RE.match(entry_id):
        raise DraftError(f"entry id {entry_id!r} must be lower-case letters, digits and dashes ([a-z0-9-]+)")
    if area and not ID_RE.match(area):
        raise DraftError(f"area {area!r} must be a folder name made of [a-z0-9-]")
    found = existing_entry(kb_root, entry_id)
    if found is not None:
        raise DraftError(f"entry '{entry_id}' already exists: {found} (pick another id or edit that file)")
    target = kb_root / area / f"{entry_id}.yaml" if area else kb_root / f"{entry_id}.yaml"
    entry, errors = parse_entry_text(text, shown or str(target), target)
    if errors or entry is None:  # a draft we cannot read back is our bug, not the author's: say so instead of writing it
        raise DraftError("internal error: the draft does not load: " + "; ".join(map(str, errors)))
    return target, entry


def read_snippet(source: str, stdin: object = None) -> str:
    """Read the pasted error from a file path or ``-`` (stdin), bounded in size."""
    if source == "-":
        import sys

        stream = stdin if stdin is not None else sys.stdin
        data = stream.read(MAX_SNIPPET_READ)  # type: ignore[attr-defined]
    else:
        try:  # a FIFO (or a device) given by mistake is refused, not waited on
            data = read_input(source, MAX_SNIPPET_READ)[:MAX_SNIPPET_READ]
        except FileNotFoundError:
            raise DraftError(f"cannot read {source}: no such file") from None
        except NotAFile as exc:
            raise DraftError(f"cannot read {source}: {exc}") from None
    text = to_text(data)
    if not text.strip():
        raise DraftError(f"{'stdin' if source == '-' else source} is empty: paste the error text you saw")
    return text
