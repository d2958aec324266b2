"""What an error line says, read off it: how much memory was asked for and was free, which GPU, which
collective ran how long, which job ended why. The answer shows these values so a reader sees at a glance
what *their* error says, without parsing a 500-character line. Keys are stable names; the renderers
label them in the reader's language (``tracebot.render.messages``)."""

from __future__ import annotations

import re

_SIZE = r"\d+(?:\.\d+)?\s?[KMGT]i?B"
# (key, pattern): the first group is the value. Order is the order a reader wants them in.
_FACTS: list[tuple[str, re.Pattern[str]]] = [
    ("requested", re.compile(rf"(?:Tried to allocate|trying to allocate)\s+({_SIZE})", re.I)),
    ("gpu", re.compile(r"\bGPU[ _](\d+)\b")),
    ("capacity", re.compile(rf"total capacity of ({_SIZE})|\(GPU \d+; ({_SIZE}) total capacity", re.I)),
    ("free", re.compile(rf"of which ({_SIZE}) is free|; ({_SIZE}) free;", re.I)),
    ("in_use", re.compile(rf"this process has ({_SIZE}) memory in use", re.I)),
    ("other_process", re.compile(rf"(Process \d+ has {_SIZE}) memory in use", re.I)),
    ("collective", re.compile(r"OpType=(\w+)")),
    ("seq", re.compile(r"SeqNum=(\d+)")),
    ("ran_for", re.compile(r"ran for (\d+) milliseconds")),
    ("timeout", re.compile(r"Timeout\(ms\)=(\d+)")),
    ("job", re.compile(r"\*\*\* (?:JOB|STEP) (\d+(?:\.\d+)?) ON \S+")),
    ("node", re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON (\S+)")),
    ("reason", re.compile(r"CANCELLED AT \S+ (DUE TO [A-Z ]+?)\s*\*\*\*")),
    ("exit_code", re.compile(r"exitcode\s*:\s*(-?\d+)|exit code (-?\d+)", re.I)),
    ("signal", re.compile(r"\b(SIG[A-Z]+)\b")),
]


def _ms(value: str) -> str:
    seconds = int(value) / 1000
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def read_facts(line: str) -> dict[str, str]:
    """``{"requested": "20.00 MiB", "gpu": "3", ...}`` for the values ``line`` states."""
    facts: dict[str, str] = {}
    for key, pattern in _FACTS:
        found = pattern.search(line)
        if found:
            value = next(g for g in found.groups() if g)
            facts[key] = _ms(value) if key in ("ran_for", "timeout") else value
    return facts
