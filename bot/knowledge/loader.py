"""Load the knowledge base from ``knowledge/**/*.yaml``, safely, reporting every problem with file:line.

Entries arrive by pull request, so a file is treated as untrusted data:
- YAML is parsed with the safe loader, with anchors/aliases refused (no "billion laughs"), repeated and
  merge (``<<``) keys refused (a reviewer reads one value, the bot uses another) and any tag that would
  construct an object refused; libyaml's C parser reads the plain files (nearly all of them),
  and anything unusual (an anchor, an alias, a tag, a repeated key, an error) is read again by the
  pure-Python loader, so every problem is reported exactly as before, with its line;
- a parsed directory is cached under a hash of every file in it (:mod:`tracebot.knowledge.cache`), and
  each file's parse under its bytes, so that an edit parses only the edited file;
- files, patterns and examples have size limits (``bot/kb/entry.py``);
- regexes are compiled with RE2, which runs in linear time: a pattern RE2 cannot compile (for example
  a backreference or lookaround, the constructs that make backtracking engines blow up) is an error, and
  so is a repetition nested in a repetition (:mod:`tracebot.knowledge.pattern_shape`), the shape that
  blows up every other engine the pattern may travel to.

A broken file never stops the others from loading; the caller decides whether to keep an older,
good knowledge base (``KnowledgeHolder`` in the bot does).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import re2

from tracebot.knowledge.cache import cached, library_versions, lookup, store, tree_hash
from tracebot.knowledge.entry import MIN_ANCHOR_CHARS, Entry, SchemaError, build_entry
from tracebot.knowledge.facts import FACT_NAMES, fact_name
from tracebot.knowledge.pattern_shape import nested_repetition
from tracebot.knowledge.silence import SILENCE_FILE, Silence, parse_silence

if TYPE_CHECKING:
    import yaml

MAX_FILE_BYTES = 256 * 1024
MERGE_TAG = "tag:yaml.org,2002:merge"  # a plain "<<" key
MAX_FAST_DEPTH = 32  # an entry is a few levels deep; deeper files go to the careful loader
MIN_CACHED_FILES = 32  # smaller knowledge bases parse in milliseconds: no cache file for them


@dataclass(frozen=True)
class LoadError:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class KnowledgeBase:
    entries: list[Entry] = field(default_factory=list)
    root: Path | None = None
    # texts no entry may answer (``silence.yaml``, :mod:`tracebot.knowledge.silence`)
    silence: list[Silence] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_id = {e.id: e for e in self.entries}

    def get(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.entries)


@cache
def _untrusted_loader() -> type:
    """SafeLoader that also refuses anchors/aliases (made on first use: PyYAML is imported only where a file
    is parsed, so a warm start, which parses none, never imports it)."""
    import yaml

    class _UntrustedLoader(yaml.SafeLoader):
        """A small file can never expand into a huge one."""

        def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.constructor.ConstructorError(
                    None, None, "YAML aliases (*name) are not allowed in knowledge files", event.start_mark
                )
            event = self.peek_event()
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"YAML anchors (&{anchor}) are not allowed in knowledge files", event.start_mark
                )
            return super().compose_node(parent, index)

        def construct_object(self, node: Any, deep: bool = False) -> Any:  # type: ignore[override]
            # A plain scalar that resolves to a date or an integer but cannot be one ("2024-13-45", an
            # integer of 5,000 digits) raises a bare ValueError from Python: the problem, with its line.
            try:
                return super().construct_object(node, deep=deep)
            except (ValueError, OverflowError) as exc:
                shown = node.value if len(str(node.value)) <= 40 else f"{str(node.value)[:40]}..."
                raise yaml.constructor.ConstructorError(
                    None, None, f"{shown!r} is not a valid {node.tag.rpartition(':')[2]} ({exc}); quote it to keep it as text", node.start_mark
                ) from exc

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # type: ignore[override]
            # PyYAML lets a repeated key silently replace the first: a reviewer reads one pattern, the bot
            # uses the other. A knowledge entry never needs a key twice, so it is an error.
            if isinstance(node, yaml.MappingNode):
                first: dict[Any, int] = {}
                for key_node, _value in node.value:
                    if key_node.tag == MERGE_TAG:  # "<<: {...}" copies keys in unseen: a repeated key by another name
                        raise yaml.constructor.ConstructorError(
                            None, None, "merge keys (<<) are not allowed in knowledge files: write each key once", key_node.start_mark
                        )
                    key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                    if key is None:
                        continue
                    if key in first:
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"duplicate key '{key}' (first on line {first[key]}); the second would silently win",
                            key_node.start_mark,
                        )
                    first[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep=deep)

    return _UntrustedLoader


# A YAML node begins at a line's start or after an indicator ("- ", "? ", ": ", or "[", "{", "," in
# flow), then blanks: only there can a node carry an anchor ("&"), be an alias ("*") or have a tag ("!"),
# and only there can a flow collection ("[", "{") open. Line breaks as YAML counts them, and a BOM.
_BEFORE_NODE = frozenset("-?:[{,\n\r\x85\u2028\u2029\ufeff")
# (the text's start is matched apart: "\\A|[...]" as one pattern is searched position by position, a line
# break alone is jumped to: 0.08 -> 0.03 s for 1,000 files)
_BREAK = "[\n\r\x85\u2028\u2029]"


def _node_starts(text: str, chars: str) -> int:
    """How many of ``chars`` in ``text`` stand where a node may begin (a few finds, no regex: an entry's
    regexes and logs hold many ``*`` and ``[`` that do not)."""
    n = 0
    for ch in chars:
        i = text.find(ch)
        while i >= 0:
            j = i - 1
            while j >= 0 and text[j] in " \t":
                j -= 1
            n += j < 0 or text[j] in _BEFORE_NODE
            i = text.find(ch, i + 1)
    return n


def _plainly_shallow(text: str) -> bool:
    """Whether ``text`` certainly has no anchor, alias or tag and nests at most :data:`MAX_FAST_DEPTH`
    deep, read from the text alone: cheaper than libyaml's events, which come to Python one by one.
    Conservative: a quoted line that starts with ``*`` or a deep indentation only means the events are
    read. A block collection at column ``c`` (counting the "- " and "? " markers before it) is at most
    ``2c + 2`` deep: each column holds a mapping and a sequence of its values (``k:`` then ``-`` on the
    next line, the next key on the line after at one more space); a flow collection opens only where a
    node may begin, one level each."""
    if _node_starts(text, "&*!"):
        return False
    # lines indented fewer than this: 2 * (columns - 1) + 2 block levels, plus the flow ones, fit
    columns = (MAX_FAST_DEPTH - _node_starts(text, "[{")) // 2
    if columns <= 0:
        return False
    indent = rf"[ \t?:-]{{{columns},}}"
    return re.match(indent, text) is None and re.search(_BREAK + indent, text) is None


def _fast_parse(text: str) -> tuple[dict[str, int], Any] | None:
    """(each key's line, data) through libyaml's C parser, or None when the file needs the careful loader: it has
    an anchor, an alias, an explicit tag or a repeated key, or libyaml finds anything wrong with it."""
    import yaml

    if not yaml.__with_libyaml__:
        return None
    try:
        if not _plainly_shallow(text):
            depth = 0
            for event in yaml.parse(text, Loader=yaml.CSafeLoader):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                    return None
                if isinstance(event, yaml.CollectionStartEvent):
                    depth += 1
                    if depth > MAX_FAST_DEPTH:  # libyaml's composer recurses in C: deep nesting would crash it
                        return None
                elif isinstance(event, yaml.CollectionEndEvent):
                    depth -= 1
                implicit = getattr(event, "implicit", True)
                if getattr(event, "tag", None) is not None and not (implicit is True or (isinstance(implicit, tuple) and any(implicit))):
                    return None
        loader = yaml.CSafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:  # an empty document: the careful loader says so
                return None
            lines: dict[str, int] = {}
            return lines, _built(loader, node, "", lines)
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, _Unusual):
        return None


class _Unusual(Exception):
    """A node :func:`_built` leaves to the careful loader."""


_STR, _MAP, _SEQ, _VALUE = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "map", "seq", "value"))


def _built(loader: Any, node: yaml.Node, prefix: str, lines: dict[str, int]) -> Any:
    """The data SafeLoader's ``construct_document`` makes of ``node``, and each key's line recorded in
    ``lines`` as :func:`_key_lines` records it, in one walk (the two walks of the same tree were ~0.2 s
    of a 1,000-file parse). A plain string is the node's text, as SafeLoader's ``construct_yaml_str``
    returns it; any other scalar (an int, a float, a bool, a null, a timestamp, or one it refuses) is
    constructed by ``loader`` itself, so with SafeLoader's own rules and errors. Raises :class:`_Unusual`
    where :func:`_key_lines` gives ``None`` (a repeated or merge key) and for what the careful loader
    should read (a key that is not a scalar, a collection with another tag): no alias reaches here (the
    text or its events were checked), so no node is met twice."""
    kind = node.id  # "scalar", "mapping", "sequence": the three node classes' own names
    if kind == "scalar":
        return node.value if node.tag == _STR else loader.construct_object(node)
    if kind == "mapping" and node.tag == _MAP:
        mapping: dict[Any, Any] = {}
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.id != "scalar" or key_node.tag == MERGE_TAG or key_node.value in seen:
                raise _Unusual
            name = key_node.value
            seen.add(name)
            path = f"{prefix}.{name}" if prefix else name
            if path:
                lines[path] = key_node.start_mark.line + 1
            # a key is constructed as SafeLoader does (``1:`` is the int 1; "=", the value tag, is the
            # string "=" after its flatten_mapping)
            key = name if key_node.tag in (_STR, _VALUE) else loader.construct_object(key_node)
            mapping[key] = _built(loader, value_node, path, lines)
        return mapping
    if kind == "sequence" and node.tag == _SEQ:
        items = []
        for i, item in enumerate(node.value):
            path = f"{prefix}.{i}"
            lines[path] = item.start_mark.line + 1
            items.append(_built(loader, item, path, lines))
        return items
    raise _Unusual


def _key_lines(node: yaml.Node) -> dict[str, int] | None:
    """Map dotted key paths (``recognise.regex.0``) to 1-based line numbers from the composed node tree,
    in document order; ``None`` when a mapping repeats a key (PyYAML would keep only the last) or has a
    merge key (``<<``, which copies in keys the careful loader refuses)."""
    import yaml

    lines: dict[str, int] = {}
    # one walk and one dict (merging each level's own dict into its parent's copied the deep keys again)
    stack: list[tuple[yaml.Node, str, int]] = [(node, "", 0)]
    while stack:
        node, prefix, line = stack.pop()
        if prefix:
            lines[prefix] = line
        if isinstance(node, yaml.MappingNode):
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            if len(keys) != len(set(keys)) or any(k.tag == MERGE_TAG for k, _ in node.value):
                return None
            children = [
                (value, f"{prefix}.{key.value}" if prefix else str(key.value), key.start_mark.line + 1)
                for key, value in node.value
            ]
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, f"{prefix}.{i}", item.start_mark.line + 1) for i, item in enumerate(node.value)]
        else:
            continue
        stack += reversed(children)
    return lines


def parse_entry_file(path: Path, display: str | None = None) -> tuple[Entry | None, list[LoadError]]:
    """Parse and validate one entry file. Never raises for bad content; returns the problems."""
    shown = display or str(path)
    raw, problem = _read_limited(path, shown)
    if problem is not None:
        return None, [problem]
    return parse_entry_text(raw, shown, path)


_LINK_REFUSED = "a symbolic link: not read (a knowledge file must be the file itself)"


def _read_limited(path: Path, shown: str) -> tuple[bytes, LoadError | None]:
    """A knowledge-base file's bytes, or the problem: a symbolic link (never followed: a pull request's
    link could point at any file tracebot can read, and errors quote what they parse), unreadable, or
    over :data:`MAX_FILE_BYTES` (told by its size, before anything is read). The checks are made on the
    opened file, so a link or a FIFO swapped in after the directory was listed is refused too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link (dangling or not)
            return b"", LoadError(shown, 1, _LINK_REFUSED)
        return b"", LoadError(shown, 1, f"cannot read: {exc.strerror or exc}")
    with open(fd, "rb") as f:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return b"", LoadError(shown, 1, "not a regular file: nothing in it was read")
            raw = f.read(MAX_FILE_BYTES + 1) if info.st_size <= MAX_FILE_BYTES else b""
            if info.st_size > MAX_FILE_BYTES or len(raw) > MAX_FILE_BYTES:  # also one grown since fstat
                return b"", LoadError(shown, 1, f"file is {max(info.st_size, len(raw))} bytes; the limit is {MAX_FILE_BYTES}")
            return raw, None
        except OSError as exc:
            return b"", LoadError(shown, 1, f"cannot read: {exc.strerror or exc}")


def _decode(raw: bytes, shown: str) -> tuple[str, LoadError | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", LoadError(shown, 1, f"not UTF-8 text ({exc.reason} at byte {exc.start})")


def parse_entry_text(raw: bytes | str, shown: str, path: Path | None = None) -> tuple[Entry | None, list[LoadError]]:
    if isinstance(raw, bytes):
        raw, problem = _decode(raw, shown)
        if problem is not None:
            return None, [problem]
    fast = _fast_parse(raw)
    if fast is not None:
        lines, data = fast
    else:
        node, data, problem = _careful_parse(raw, shown)
        if problem is not None:
            return None, [problem]
        lines = (_key_lines(node) or {}) if node is not None else {}  # (it refuses a repeated key itself)
    entry, schema_errors = build_entry(data)
    errors = [LoadError(shown, _line_for(lines, e), e.message) for e in schema_errors]
    if entry is None:
        return None, errors
    entry.lines = lines
    entry.path = path
    errors += [LoadError(shown, entry.line_of(key), msg) for key, msg in check_patterns(entry)]
    if path is not None and path.stem != entry.id:
        errors.append(LoadError(shown, entry.line_of("id"), f"id '{entry.id}' must equal the file name '{path.stem}'"))
    return entry, errors


# PyYAML's words for the slips authors make, and what to do about each.
_YAML_HINTS = [
    ("found character '\\t' that cannot start any token", " (YAML indents with spaces: replace the tab with spaces)"),
    ("expected <block end>", " (this line's indentation does not fit the lines above it: "
                             "items of one list, and keys of one mapping, start in the same column)"),
    ("mapping values are not allowed here", " (a colon and a space in unquoted text: put the text in quotes)"),
]


def _careful_parse(raw: str, shown: str) -> tuple[Any, Any, LoadError | None]:
    """(node, data, None) through the pure-Python loader that refuses anchors, aliases, object tags and
    repeated keys, or (None, None, the problem with its line)."""
    import yaml

    try:
        loader = _untrusted_loader()(raw)  # the reader rejects control characters here, before parsing
    except yaml.reader.ReaderError as exc:
        line = raw[: exc.position].count("\n") + 1
        return None, None, LoadError(shown, line, f"YAML: character #x{exc.character:04x} is not allowed in YAML text")
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = exc.problem or exc.context or "invalid YAML"
        if what.startswith("could not determine a constructor for the tag"):
            what = f"tag {what.rpartition(' ')[2]} is not allowed: an entry is plain data, it never constructs objects"
        hint = next((h for start, h in _YAML_HINTS if what.startswith(start)), "")
        return None, None, LoadError(shown, line, f"YAML: {what}{hint}")
    except yaml.YAMLError as exc:
        return None, None, LoadError(shown, 1, f"YAML: {exc}")
    except RecursionError:  # PyYAML composes recursively: "[[[[..." thousands deep must not crash the load
        return None, None, LoadError(shown, 1, "YAML: nested too deeply (knowledge files are only a few levels deep)")
    finally:
        loader.dispose()
    return node, data, None


def _line_for(lines: dict[str, int], err: SchemaError) -> int:
    key = err.key
    while key:
        if key in lines:
            return lines[key]
        key = key.rpartition(".")[0]
    return 1


def compile_pattern(pattern: str) -> Any:
    """Compile an entry regex with RE2, case-insensitive. Raises ``re2.error`` when RE2 refuses it."""
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = 8 << 20  # bound the compiled program; a pathological pattern fails to compile
    options.log_errors = False  # RE2 would also print each refusal through absl to the process's stderr
    return re2.compile(pattern, options)


_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")


def _re2_refusal(exc: Exception) -> str:
    """Why RE2 refused a pattern, in words, with what to write instead where there is a usual way."""
    said = exc.args[0] if exc.args else str(exc)
    said = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    if said.startswith("invalid perl operator: ") and said.endswith(_LOOKAROUND):
        return f"{said} (RE2 has no lookaround: match the error text itself, and list lines that must not count under `unless:`)"
    if re.match(r"invalid escape sequence: \\[1-9]", said):
        return f"{said} (RE2 has no backreferences: write the repeated text out, or use a class like \\S+)"
    return said


def check_patterns(entry: Entry) -> list[tuple[str, str]]:
    """Problems with an entry's anchors and regexes: (dotted key, message)."""
    problems: list[tuple[str, str]] = []
    for i, anchor in enumerate(entry.anchors):
        if len(anchor.strip()) < MIN_ANCHOR_CHARS:
            problems.append(
                (f"recognise.anchors.{i}", f"anchor {anchor!r} is too short to be specific (min {MIN_ANCHOR_CHARS})")
            )
    for kind in ("regex", "unless"):
        for i, pattern in enumerate(getattr(entry, kind)):
            key = f"recognise.{kind}.{i}"
            try:
                compiled = compile_pattern(pattern)
            except Exception as exc:  # re2.error, or TypeError/ValueError on odd input
                problems.append((key, f"regex {pattern!r} is not valid RE2 (linear-time) syntax: {_re2_refusal(exc)}"))
                continue
            if kind == "regex" and compiled.search("") is not None:
                problems.append((key, f"regex {pattern!r} matches the empty string, so it would match every line"))
            group = nested_repetition(pattern)
            if group is not None:
                problems.append((key, f"regex {pattern!r} repeats a group that itself repeats ({group}): that is the "
                                      "shape of catastrophic backtracking in every engine but RE2, and it matches "
                                      "nothing the flat form would not; write it without the nesting"))
            unknown = [name for name in compiled.groupindex if fact_name(name) not in FACT_NAMES]
            if unknown:
                problems.append((key, f"named group {unknown[0]!r} is not a known value name "
                                      f"(known: {', '.join(FACT_NAMES)}; see CONTRIBUTING.md)"))
    seen: dict[str, str] = {}
    for kind in ("anchors", "regex", "exemplars"):
        for i, pattern in enumerate(getattr(entry, kind)):
            low = pattern.lower()
            if low in seen:
                problems.append((f"recognise.{kind}.{i}", f"duplicate pattern {pattern!r} (also in {seen[low]})"))
            seen[low] = kind
    return problems


SOURCES_FILE = "sources.yaml"  # beside the entry folders: the documents entries cite (title, public URL)


def entry_files(root: Path) -> list[Path]:
    return _listing(root)[0]


def _listing(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The entry files under ``root`` (links too, even dangling ones, so that the loader can say it refuses
    them), and each folder whose entries are not read, with why: one that could not be listed (``Path.rglob``
    skipped it in silence, and every entry in it went missing from the answers with no problem named), or a
    link to a folder (never followed: it could lead anywhere the service user can read; said, so that an
    author who linked a folder of entries in hears why none of them answers)."""
    skipped: list[tuple[Path, str]] = []

    def said(exc: OSError) -> None:
        skipped.append((Path(exc.filename), f"folder cannot be read ({exc.strerror or exc})"))

    found = []
    for top, folders, files in os.walk(root, onerror=said):
        for name in folders:
            p = Path(top, name)
            if p.is_symlink() and not name.endswith(".yaml"):  # (one named like an entry is refused as a file)
                skipped.append((p, "a symbolic link to a folder: not followed"))
        for name in [*files, *(f for f in folders if f.endswith(".yaml"))]:
            p = Path(top, name)
            if name.endswith(".yaml") and not name.startswith(".") and (p.is_file() or p.is_symlink()):
                found.append(p)
    skip = (root / SOURCES_FILE, root / SILENCE_FILE)
    return sorted(p for p in found if p not in skip), sorted(skipped)


def load_documents(root: Path) -> tuple[dict[str, dict[str, str]], list[LoadError]]:
    """``{doc file: {title, url?}}`` from ``sources.yaml``; empty when the knowledge base has none."""
    path = root / SOURCES_FILE
    if not (path.exists() or path.is_symlink()):
        return {}, []
    shown = _shown_path(path, root)
    node, data, problem = _parse_side_file(path, shown)
    if problem is not None:
        return {}, [problem]
    lines = (_key_lines(node) or {}) if node is not None else {}
    docs: dict[str, dict[str, str]] = {}
    errors: list[LoadError] = []
    for doc, info in (data or {}).items() if isinstance(data, dict) else ():
        if not isinstance(info, dict) or not isinstance(info.get("title"), str):
            line = lines.get(str(doc), 1)
            errors.append(LoadError(shown, line, f"document {doc!r} needs a 'title' (and a public 'url' if it has one)"))
            continue
        docs[str(doc)] = {k: str(v) for k, v in info.items() if k in ("title", "url")}
    if not isinstance(data, dict):
        errors.append(LoadError(shown, 1, "sources.yaml must map document file names to {title, url}"))
    return docs, errors


def _load_silence(root: Path) -> tuple[list[Silence], list[LoadError]]:
    """The texts of ``silence.yaml`` (:mod:`tracebot.knowledge.silence`); none when there is no such file."""
    path = root / SILENCE_FILE
    if not (path.exists() or path.is_symlink()):
        return [], []
    shown = _shown_path(path, root)
    node, _data, problem = _parse_side_file(path, shown)
    if problem is not None:
        return [], [problem]
    silence, problems = parse_silence(node)
    return silence, [LoadError(shown, line, message) for line, message in problems]


def _parse_side_file(path: Path, shown: str) -> tuple[Any, Any, LoadError | None]:
    """(node, data, None) of a file beside the entries (``sources.yaml``, ``silence.yaml``), or the
    problem: they arrive by pull request too, so they are read under an entry file's rules (its size
    limit, the careful loader's refusals, every problem with its line). One that is there but not a
    regular file (a directory, a device, a broken link) is a problem too: its texts must not vanish
    unnoticed, and a device is never read."""
    if not path.is_file():
        return None, None, LoadError(shown, 1, "not a regular file: nothing in it was read")
    raw, problem = _read_limited(path, shown)
    text, problem = _decode(raw, shown) if problem is None else ("", problem)
    return _careful_parse(text, shown) if problem is None else (None, None, problem)


def _cite_documents(entry: Entry, docs: dict[str, dict[str, str]], shown: str) -> tuple[Entry, list[LoadError]]:
    """``entry`` with each ``doc:`` source given its document's title and public URL, so answers can link
    it: a copy when that adds anything (the entry as parsed is what the parse's cache keeps, and
    ``sources.yaml`` may change on its own), and the problems met."""
    errors = []
    sources = []
    for i, source in enumerate(entry.sources):
        doc = source.get("doc")
        if doc is not None and doc not in docs:
            errors.append(LoadError(shown, entry.line_of(f"sources.{i}"), f"document '{doc}' is not listed in {SOURCES_FILE}"))
        if doc is None or doc not in docs:
            sources.append(source)
            continue
        cited = {**source}
        cited.setdefault("title", docs[doc]["title"])
        if "url" in docs[doc]:
            cited.setdefault("url", docs[doc]["url"])
        sources.append(cited if cited != source else source)
    if any(a is not b for a, b in zip(sources, entry.sources, strict=True)):
        entry = _copy(entry)
        entry.sources = sources
    return entry, errors


def _copy(entry: Entry) -> Entry:
    """A shallow copy (``copy.copy`` goes through pickling's protocol: ten times slower, on every start)."""
    out = object.__new__(Entry)
    out.__dict__.update(entry.__dict__)
    return out


def load_knowledge_base(
    root: Path | str, *, whole: bool = True, each: Callable[[Entry], None] | None = None
) -> tuple[KnowledgeBase, list[LoadError]]:
    """Load every entry under ``root``. Entries with errors are left out; every problem is returned.

    From the cache when nothing under ``root`` changed since it was last loaded (same files, same
    bytes, same loader code and versions). ``whole=False``: only each file's parse is cached, not the
    whole result, for a caller that caches what it builds from it with the knowledge base inside (the
    matcher, :mod:`tracebot.matcher.loading`): the directory is then neither hashed nor stored twice.
    ``each``: called with every entry the knowledge base will hold, in its order, as soon as the entry is
    final (its file parsed and checked), while the rest are parsed (``whole=False`` or an uncached load)."""
    root = Path(root)
    if not root.is_dir() or len(entry_files(root)) < MIN_CACHED_FILES:
        return _load(root, each=each)
    import yaml

    code = [p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py"))]
    # (an RE2 upgrade may change which patterns compile: its version is in the key, not just its name)
    versions = f"{library_versions(('yaml', 're2'))} {yaml.__with_libyaml__} {root.resolve()}".encode()
    files_key = hashlib.sha256(b"\0".join([versions, *code])).hexdigest()[:24]  # this directory, this code
    if not whole:
        return _load(root, files_key, each)
    return cached("kb", tree_hash(root, [versions, *code]), lambda: _load(root, files_key, each))


def _load(
    root: Path, files_key: str | None = None, each: Callable[[Entry], None] | None = None
) -> tuple[KnowledgeBase, list[LoadError]]:
    """``files_key``: where each file's parse is kept (:func:`_parse_files`), or ``None``: parse all.
    ``each``: as :func:`load_knowledge_base`'s."""
    errors: list[LoadError] = []
    entries: list[Entry] = []
    if not root.is_dir():
        what = "not a directory: give the knowledge folder" if root.exists() else "knowledge directory not found"
        return KnowledgeBase([], root), [LoadError(str(root), 1, what)]
    ids: dict[str, str] = {}
    docs, errors = load_documents(root)
    files, skipped = _listing(root)
    errors += [LoadError(_shown_path(folder, root), 1, f"{why}: no entry in it was loaded") for folder, why in skipped]
    for shown, (entry, errs) in _parse_files(root, files, files_key):
        errors += errs
        if entry is None or errs:
            continue
        if entry.id in ids:
            errors.append(LoadError(shown, entry.line_of("id"), f"duplicate id '{entry.id}' (also in {ids[entry.id]})"))
            continue
        ids[entry.id] = shown
        if docs:
            entry, problems = _cite_documents(entry, docs, shown)
            errors += problems
        entries.append(entry)
        if each is not None:
            each(entry)
    if not entries and not errors:
        # An empty directory (a bad checkout, a wrong TRACEBOT_KNOWLEDGE) would make the bot silent.
        errors.append(LoadError(str(root), 1, "no knowledge entries (*.yaml) found; nothing could be answered"))
    silence, problems = _load_silence(root)
    errors += problems
    known = set(ids)
    for entry in entries:
        for i, rel in enumerate(entry.related):
            if rel not in known:
                errors.append(
                    LoadError(_shown(entry, root), entry.line_of(f"related.{i}"), f"related entry '{rel}' does not exist")
                )
    return KnowledgeBase(entries, root, silence), errors


def _parse_files(
    root: Path, files: list[Path], files_key: str | None
) -> Iterator[tuple[str, tuple[Entry | None, list[LoadError]]]]:
    """(path as shown, :func:`parse_entry_file`'s result) for every entry file of ``files``, each as soon as it is
    parsed. With ``files_key``, a file whose bytes were parsed before (the last load of this directory) is
    not parsed again: editing one entry of a thousand parses one file. The results are kept (once the
    last is given) as parsed: :func:`_cite_documents` gives the knowledge base copies of the entries it
    fills in documents' titles in (``sources.yaml`` may change on its own)."""
    before = (lookup("files", files_key) if files_key else None) or {}
    now: dict[str, tuple[bytes, tuple[Entry | None, list[LoadError]]]] = {}
    for path in files:
        shown = _shown_path(path, root)
        raw, problem = _read_limited(path, shown)
        if problem is not None:  # a link, too large or unreadable
            yield shown, (None, [problem])
            continue
        digest = hashlib.sha256(raw).digest()
        kept = before.get(shown)
        if kept is not None and kept[0] == digest:
            parsed = kept[1]
            if parsed[0] is not None:
                parsed[0].path = path  # as this load spells it (relative or absolute), not as the cached one did
        else:
            parsed = parse_entry_text(raw, shown, path)
        now[shown] = (digest, parsed)
        yield shown, parsed
    if files_key and {k: d for k, (d, _) in now.items()} != {k: d for k, (d, _) in before.items()}:
        store("files", files_key, now)


def _shown_path(path: Path, root: Path) -> str:
    """A file of the knowledge base as problems name it: from the knowledge folder's name on."""
    return str(path.relative_to(root.parent))


def _shown(entry: Entry, root: Path) -> str:
    return _shown_path(entry.path, root) if entry.path else entry.id
