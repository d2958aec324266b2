"""``knowledge/silence.yaml``: texts that must get no answer at all, as knowledge rather than code.

An entry's ``examples.no_match`` says "not this entry"; a silence text says "no entry": the ranking model
trains every candidate's row for it as a wrong answer, and ``kb lint`` fails when one gets a confident
answer. Each text is copied word for word from a public source (``url``) or marked ``invented: true``
(the ordinary chat lines written here), and says which ``kind`` of silence it is:

- ``chat``: thanks, +1, follow-ups, questions with no error content;
- ``fixed``: a reply saying what fixed it ("fixed by upgrading to 2.1, thanks");
- ``neighbour``: a question about a neighbouring topic that no entry answers;
- ``uncovered``: a real error no entry covers that reads like one that does.

The file is untrusted like an entry file: the loader reads it under the same YAML rules and size limit
(``_parse_side_file`` in :mod:`tracebot.knowledge.loader`), and this module checks what it says; every
problem is reported with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SILENCE_FILE = "silence.yaml"  # beside the entry folders
KINDS = ("chat", "fixed", "neighbour", "uncovered")
MAX_TEXT_CHARS = 4000
MAX_PER_SOURCE = 2  # a thread's wording should not dominate what silence looks like
_KEYS = {"text", "kind", "url", "invented"}


@dataclass(frozen=True)
class Silence:
    text: str
    kind: str
    url: str = ""  # where the text was copied from; "" for an invented one
    line: int = 0  # of the item in silence.yaml


def normalise_url(url: str) -> str:
    """A source URL compared by what it points at: no scheme, ``www.``, fragment, query or trailing
    slash, lower case (``…/issues/12#issuecomment-3`` is ``…/issues/12``)."""
    url = url.strip().lower().split("#", 1)[0].split("?", 1)[0]
    url = re.sub(r"^[a-z]+://", "", url)
    url = url.removeprefix("www.")
    return url.rstrip("/")


def parse_silence(node: Any) -> tuple[list[Silence], list[tuple[int, str]]]:
    """Check the composed YAML of ``silence.yaml`` (a mapping with a ``silence:`` list of items)."""
    import yaml  # only when the knowledge base is parsed (a warm start never imports PyYAML)

    out: list[Silence] = []
    problems: list[tuple[int, str]] = []
    items = None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value != "silence":
                problems.append((key.start_mark.line + 1, f"unknown key {key.value!r} (only 'silence')"))
            elif isinstance(value, yaml.SequenceNode):
                items = value.value
    if items is None:
        line = node.start_mark.line + 1 if node is not None else 1
        return [], [*problems, (line, "silence.yaml must have a 'silence:' list of {text, kind, url | invented}")]
    texts: dict[str, int] = {}
    per_source: dict[str, list[int]] = {}
    for item in items:
        line = item.start_mark.line + 1
        s, problem = _item(item, line)
        if problem:
            problems.append((line, problem))
            continue
        assert s is not None
        key = " ".join(s.text.split()).lower()
        if key in texts:
            problems.append((line, f"the same text is at line {texts[key]}"))
            continue
        texts[key] = line
        if s.url:
            per_source.setdefault(normalise_url(s.url), []).append(line)
        out.append(s)
    for url, lines in per_source.items():
        if len(lines) > MAX_PER_SOURCE:
            problems.append((lines[MAX_PER_SOURCE], f"more than {MAX_PER_SOURCE} texts from {url} (lines {lines})"))
    return out, problems


def _item(item: Any, line: int) -> tuple[Silence | None, str]:
    import yaml

    if not isinstance(item, yaml.MappingNode):
        return None, "each silence item is a mapping {text, kind, url | invented}"
    values: dict[str, Any] = {}
    for key, value in item.value:
        if key.value not in _KEYS:
            return None, f"unknown key {key.value!r} (known: {', '.join(sorted(_KEYS))})"
        if not isinstance(value, yaml.ScalarNode):
            return None, f"'{key.value}' must be a single value"
        values[key.value] = value.value
    text, kind, url = values.get("text", ""), values.get("kind", ""), values.get("url", "")
    invented = values.get("invented", "").lower() == "true"
    if not text.strip():
        return None, "'text' is missing or empty"
    if len(text) > MAX_TEXT_CHARS:
        return None, f"'text' is longer than {MAX_TEXT_CHARS} characters"
    if kind not in KINDS:
        return None, f"'kind' must be one of {', '.join(KINDS)} (got {kind!r})"
    if bool(url) == invented:
        return None, "give the text's public source as 'url', or mark it 'invented: true' (one of the two)"
    if url and not url.startswith("https://"):
        return None, f"'url' must be an https:// address (got {url!r})"
    return Silence(text, kind, url, line), ""
