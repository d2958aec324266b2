"""A knowledge entry as loaded from YAML, and the schema every entry file must follow.

The schema is checked here, in plain Python, so each problem can name the file and the line of the
offending key (see ``bot/kb/loader.py``). CONTRIBUTING.md documents the same format for authors.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ROLES = ("root-cause", "symptom")

# Size limits: entries come from pull requests, so nothing in one may be big enough to hurt the bot.
MAX_PATTERN_CHARS = 500
MAX_PATTERNS_PER_KIND = 40
MAX_EXAMPLE_CHARS = 64_000
MAX_EXAMPLES = 40
MAX_TEXT_CHARS = 8_000
MIN_ANCHOR_CHARS = 6

REQUIRED = ("id", "title", "summary", "role", "recognise", "cause", "fix", "sources", "examples")
KNOWN_KEYS = set(REQUIRED) | {"priority", "tags", "platform", "related", "trace", "ja"}
# ``ja:`` carries the entry's reader-facing texts in Japanese; anything missing falls back to English.
JA_KEYS = ("title", "summary", "cause", "fix")
RECOGNISE_KEYS = ("anchors", "regex", "exemplars", "phrases", "unless")
EXAMPLE_KEYS = ("match", "no_match", "todo_match")


@dataclass
class Entry:
    id: str
    title: str
    summary: str
    role: str
    cause: str
    fix: list[str]
    sources: list[dict[str, str]]
    priority: int = 50
    tags: list[str] = field(default_factory=list)
    # The platforms the failure exists only on (``platform: sagemaker``; names from the matcher's
    # ``platforms.yaml``): a text that mentions none of them is rarely about this entry (``linux``: a text is on
    # Linux unless it names macOS, and there the entry's anchors and regexes count for nothing).
    platform: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    regex: list[str] = field(default_factory=list)
    exemplars: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    unless: list[str] = field(default_factory=list)
    examples_match: list[str] = field(default_factory=list)
    examples_no_match: list[str] = field(default_factory=list)
    examples_todo: list[str] = field(default_factory=list)
    ja: dict[str, Any] = field(default_factory=dict)  # {title, summary, cause: str; fix: list[str]}, all optional
    path: Path | None = None
    lines: Mapping[str, int] = field(default_factory=dict)  # dotted key path -> 1-based line in the file

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled for the knowledge and matcher caches: the line map (dozens of keys per entry, read only
        # when a problem is reported) packed into two flat values, unpacked on first use.
        values = tuple(getattr(self, name) for name in _PLAIN_FIELDS)
        return _unpickle_entry, (values, str(self.path) if self.path is not None else None, *_pack(self.lines))

    def line_of(self, key: str) -> int:
        """Line of ``key`` (e.g. ``examples.match.2``), falling back to its closest parent, then 1."""
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rpartition(".")[0]
        return 1

    def text_in(self, lang: str) -> dict[str, Any]:
        """title, summary, cause and fix in ``lang`` where the entry has them, English otherwise."""
        english = {"title": self.title, "summary": self.summary, "cause": self.cause, "fix": list(self.fix)}
        if lang == "ja":
            return {**english, **{k: v for k, v in self.ja.items() if v}}
        return english

    def source_text(self) -> str:
        parts = []
        for s in self.sources:
            if "doc" in s:
                parts.append(f"{s['doc']} § {s.get('section', '')}".strip(" §"))
            elif "url" in s:
                parts.append(s["url"])
        return "; ".join(parts)


class SchemaError(ValueError):
    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key
        self.message = message


def _not_text(value: Any) -> str:
    """What YAML made of a value that should have been text, when quotes would have kept it text."""
    if isinstance(value, dict) and len(value) == 1:
        return "; YAML read it as 'key: value' (a colon and a space in unquoted text): put the text in quotes"
    if isinstance(value, bool | int | float):
        return f"; YAML read it as {str(value).lower()!r}, not text: put it in quotes"
    return ""


def _str(data: dict[str, Any], key: str, errors: list[SchemaError], limit: int = MAX_TEXT_CHARS) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        errors.append(SchemaError(key, f"'{key}' must be a non-empty string{_not_text(value)}"))
        return ""
    if len(value) > limit:
        errors.append(SchemaError(key, f"'{key}' is {len(value)} characters; the limit is {limit}"))
    return value.strip()


def _listed(value: Any) -> Any:
    """One string as a one-item list (``platform: sagemaker``); anything else as it is."""
    return [value] if isinstance(value, str) else value


def _str_list(
    value: Any, key: str, errors: list[SchemaError], *, limit: int, max_items: int, required: bool = False
) -> list[str]:
    if value is None:
        if required:
            errors.append(SchemaError(key, f"'{key}' is required"))
        return []
    if not isinstance(value, list):
        errors.append(SchemaError(key, f"'{key}' must be a list"))
        return []
    if len(value) > max_items:
        errors.append(SchemaError(key, f"'{key}' has {len(value)} items; the limit is {max_items}"))
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            errors.append(SchemaError(f"{key}.{i}", f"'{key}' item {i + 1} must be a non-empty string{_not_text(item)}"))
            continue
        if len(item) > limit:
            errors.append(
                SchemaError(f"{key}.{i}", f"'{key}' item {i + 1} is {len(item)} characters; the limit is {limit}")
            )
            continue
        out.append(item)
    return out


def build_entry(data: Any) -> tuple[Entry | None, list[SchemaError]]:
    """Validate one parsed YAML document and build the :class:`Entry`; return every problem found."""
    errors: list[SchemaError] = []
    if not isinstance(data, dict):
        return None, [SchemaError("", "an entry file must hold one mapping (key: value pairs)")]
    for key in REQUIRED:
        if key not in data:
            errors.append(SchemaError("", f"missing required key '{key}'"))
    for key in data:
        if key not in KNOWN_KEYS:
            errors.append(SchemaError(str(key), f"unknown key '{key}' (known: {', '.join(sorted(KNOWN_KEYS))})"))

    entry_id = data.get("id")
    if not isinstance(entry_id, str) or not ID_RE.match(entry_id):
        errors.append(SchemaError("id", f"'id' must match [a-z0-9-]+, got {entry_id!r}"))
        entry_id = str(entry_id)
    role = data.get("role")
    if role not in ROLES:
        errors.append(SchemaError("role", f"'role' must be one of {', '.join(ROLES)}, got {role!r}"))
    priority = data.get("priority", 50)
    if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 100:
        errors.append(SchemaError("priority", f"'priority' must be an integer 0-100, got {priority!r}"))
        priority = 50

    recognise = data.get("recognise") or {}
    if not isinstance(recognise, dict):
        errors.append(SchemaError("recognise", "'recognise' must be a mapping"))
        recognise = {}
    for key in recognise:
        if key not in RECOGNISE_KEYS:
            errors.append(SchemaError(f"recognise.{key}", f"unknown key 'recognise.{key}'"))
    kinds = {
        k: _str_list(
            recognise.get(k), f"recognise.{k}", errors, limit=MAX_PATTERN_CHARS, max_items=MAX_PATTERNS_PER_KIND
        )
        for k in RECOGNISE_KEYS
    }
    if not any(kinds[k] for k in ("anchors", "regex", "exemplars", "phrases")):
        errors.append(SchemaError("recognise", "'recognise' needs at least one of anchors, regex, exemplars, phrases"))

    examples = data.get("examples") or {}
    if not isinstance(examples, dict):
        errors.append(SchemaError("examples", "'examples' must be a mapping"))
        examples = {}
    for key in examples:
        if key not in EXAMPLE_KEYS:
            errors.append(SchemaError(f"examples.{key}", f"unknown key 'examples.{key}'"))
    ex = {
        k: _str_list(examples.get(k), f"examples.{k}", errors, limit=MAX_EXAMPLE_CHARS, max_items=MAX_EXAMPLES)
        for k in EXAMPLE_KEYS
    }
    if not ex["match"]:
        errors.append(SchemaError("examples.match", "'examples.match' needs at least one snippet that matches"))

    sources = data.get("sources")
    clean_sources: list[dict[str, str]] = []
    if not isinstance(sources, list) or not sources:
        errors.append(SchemaError("sources", "'sources' must be a non-empty list of {doc, section} or {url}"))
    else:
        for i, s in enumerate(sources):
            if not isinstance(s, dict) or not ({"doc", "url"} & set(s)):
                errors.append(SchemaError(f"sources.{i}", f"source {i + 1} needs 'doc' (+ 'section') or 'url'"))
                continue
            if "doc" in s and not s.get("section"):
                errors.append(SchemaError(f"sources.{i}", f"source {i + 1} cites a doc without a 'section'"))
            clean_sources.append({str(k): str(v) for k, v in s.items()})

    ja = _ja(data.get("ja"), errors)
    fix_raw = data.get("fix")
    if isinstance(fix_raw, str):
        fix_raw = [fix_raw]
    entry = Entry(
        id=entry_id,
        title=_str(data, "title", errors, limit=200),
        summary=_str(data, "summary", errors),
        role=str(role),
        cause=_str(data, "cause", errors),
        fix=_str_list(fix_raw, "fix", errors, limit=MAX_TEXT_CHARS, max_items=30, required=True),
        sources=clean_sources,
        priority=priority,
        tags=_str_list(data.get("tags"), "tags", errors, limit=40, max_items=20),
        platform=_str_list(_listed(data.get("platform")), "platform", errors, limit=40, max_items=5),
        related=_str_list(data.get("related"), "related", errors, limit=80, max_items=20),
        trace=_str_list(data.get("trace"), "trace", errors, limit=200, max_items=10),
        anchors=kinds["anchors"],
        regex=kinds["regex"],
        exemplars=kinds["exemplars"],
        phrases=kinds["phrases"],
        unless=kinds["unless"],
        examples_match=ex["match"],
        examples_no_match=ex["no_match"],
        examples_todo=ex["todo_match"],
        ja=ja,
    )
    return entry, errors


def _ja(value: Any, errors: list[SchemaError]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(SchemaError("ja", "'ja' must be a mapping of title, summary, cause, fix"))
        return {}
    for key in value:
        if key not in JA_KEYS:
            errors.append(SchemaError(f"ja.{key}", f"unknown key 'ja.{key}' (known: {', '.join(JA_KEYS)})"))
    out: dict[str, Any] = {}
    for key, limit in (("title", 200), ("summary", MAX_TEXT_CHARS), ("cause", MAX_TEXT_CHARS)):
        if key in value:
            out[key] = _str(value, key, [], limit) if isinstance(value[key], str) else ""
            if not out[key]:
                errors.append(SchemaError(f"ja.{key}", f"'ja.{key}' must be a non-empty string of at most {limit} characters"))
    if "fix" in value:
        raw = [value["fix"]] if isinstance(value["fix"], str) else value["fix"]
        out["fix"] = _str_list(raw, "ja.fix", errors, limit=MAX_TEXT_CHARS, max_items=30)
    return out


class PackedLines(Mapping[str, int]):
    """An entry's line map as it comes out of the cache: two flat values, a dict on first use."""

    def __init__(self, keys: str, numbers: bytes) -> None:
        self._packed: tuple[str, bytes] | None = (keys, numbers)
        self._dict: dict[str, int] = {}

    def _unpacked(self) -> dict[str, int]:
        if self._packed is not None:
            keys, numbers = self._packed
            self._dict = dict(zip(keys.split("\0"), array("l", numbers), strict=True)) if keys else {}
            self._packed = None
        return self._dict

    def __getitem__(self, key: str) -> int:
        return self._unpacked()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._unpacked())

    def __len__(self) -> int:
        return len(self._unpacked())

    def __reduce__(self) -> tuple[Any, tuple[str, bytes]]:
        return PackedLines, _pack(self)

    def __repr__(self) -> str:
        return repr(self._unpacked())


def _pack(lines: Mapping[str, int]) -> tuple[str, bytes]:
    # YAML text cannot hold a NUL (its reader refuses control characters), so no key contains one
    return "\0".join(lines), array("l", lines.values()).tobytes()


def _unpickle_entry(values: tuple[Any, ...], path: str | None, keys: str, numbers: bytes) -> Entry:
    entry = Entry(*values)
    entry.path = Path(path) if path is not None else None
    entry.lines = PackedLines(keys, numbers)
    return entry


_PLAIN_FIELDS = tuple(f.name for f in fields(Entry) if f.name not in ("path", "lines"))
assert [f.name for f in fields(Entry)][len(_PLAIN_FIELDS) :] == ["path", "lines"], "Entry(*values) needs them last"
