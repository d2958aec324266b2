"""What an error line says, read off it: how much memory was asked for and was free, which GPU and who
else holds it, which collective ran how long, which port was taken, which job ended why. The answer
shows these values so a reader sees at a glance what *their* error says, without parsing a 500-character
line.

One mechanism: values come from regex named groups, whose names are the vocabulary of
:data:`tracebot.knowledge.facts.FACT_NAMES`. The regexes of the entry that matched come first (an entry
author knows where the values of *its* error sit); the generic readers below fill in what they left
out, for entries that declare none. Renderers label the names in the reader's language
(``tracebot.render.messages``, ``fact.<name>``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tracebot.knowledge.facts import FACT_NAMES, MILLISECOND_FACTS, fact_name

_SIZE = r"\d+(?:\.\d+)?\s?[KMGT]i?B"
# Generic readers, each with groups named after the value it reads (see fact_name for ``_2``).
_GENERIC: list[re.Pattern[str]] = [
    re.compile(rf"(?:Tried to allocate|trying to allocate)\s+(?P<requested>{_SIZE})", re.I),
    re.compile(r"\bGPU[ _](?P<gpu>\d+)\b"),
    re.compile(rf"total capac(?:i)?ty of (?P<capacity>{_SIZE})|\(GPU \d+; (?P<capacity_2>{_SIZE}) total capacity", re.I),
    re.compile(rf"of which (?P<free>{_SIZE}) is free|; (?P<free_2>{_SIZE}) free;", re.I),
    re.compile(rf"this process has (?P<in_use>{_SIZE}) memory in use", re.I),
    re.compile(rf"Process (?P<other_pid>\d+) has (?P<other_held>{_SIZE}) memory in use", re.I),
    re.compile(r"OpType=(?P<collective>\w+)"),
    re.compile(r"SeqNum=(?P<seq>\d+)"),
    re.compile(r"ran for (?P<ran_for>\d+) milliseconds"),
    re.compile(r"Timeout\(ms\)=(?P<timeout>\d+)"),
    re.compile(r"\*\*\* (?:JOB|STEP) (?P<job>\d+(?:\.\d+)?) ON (?P<node>\S+)"),
    re.compile(r"CANCELLED AT \S+ (?P<reason>DUE TO [A-Z ]+?)\s*\*\*\*"),
    re.compile(r"exitcode\s*:\s*(?P<exit_code>-?\d+)|exit code (?P<exit_code_2>-?\d+)", re.I),
    re.compile(r"\b(?P<signal>SIG[A-Z]+)\b"),
]
_ORDER = {name: i for i, name in enumerate(FACT_NAMES)}


def named_values(pattern: Any, line: str) -> dict[str, str]:
    """The named groups ``pattern`` (``re`` or RE2) captures in ``line``: ``{name: value}``, unmatched
    optional groups left out; ``name_2`` (a second alternative for the same value) counts as ``name``."""
    found = pattern.search(line)
    if not found:
        return {}
    out: dict[str, str] = {}
    for name, value in found.groupdict().items():
        if value:
            out.setdefault(fact_name(name), value)
    return out


def read_facts(line: str, declared: Iterable[Any] = ()) -> dict[str, str]:
    """``{"requested": "20.00 MiB", "gpu": "3", ...}`` for the values ``line`` states: what the
    ``declared`` patterns (the matched entry's regexes with named groups) capture, then what the generic
    readers find that they did not. In the vocabulary's order; milliseconds shown as seconds or minutes."""
    facts: dict[str, str] = {}
    for pattern in [*declared, *_GENERIC]:
        for name, value in named_values(pattern, line).items():
            facts.setdefault(name, value)
    return {k: _ms(v) if k in MILLISECOND_FACTS else v
            for k, v in sorted(facts.items(), key=lambda kv: _ORDER.get(kv[0], len(_ORDER)))}


def _ms(value: str) -> str:
    seconds = int(value) / 1000
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"
