"""Which platforms a text mentions, from their words of the trade (``platforms.yaml``, beside the glossary).

A knowledge entry may name the platforms its failure exists only on (``platform: sagemaker``); the ranking
model reads whether a candidate entry's platforms are all absent from the text (``off_platform``,
:func:`tracebot.matcher.model.rows`), so an entry written for SageMaker does not answer a plain PyTorch
question because both are about a checkpoint that hangs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import re2

from tracebot.knowledge.cache import cached_yaml

PLATFORMS = Path(__file__).with_name("platforms.yaml")
# A word of the trade is whole: no ASCII letter, digit or underscore on either side (Japanese around it is
# fine: "SageMakerのジョブ"). RE2 has no lookaround, so the pattern takes the neighbouring character (a
# search only asks whether there is a match); RE2's automaton reads a 2 KB paste once for all the terms,
# where Python's backtracking alternation tried every term at every position (1.2 ms a paste).
_EDGE = "[^A-Za-z0-9_]"


def _term(term: str) -> str:
    if not term.isascii():
        return re.escape(term)
    prefix = term.endswith("*")
    words = [re.escape(w) for w in term.rstrip("*").split()]
    return r"[\s_-]+".join(words) + (r"[\w.]*" if prefix else "")


@cache
def patterns(path: Path = PLATFORMS) -> dict[str, Any]:
    """Per platform, one case-insensitive pattern of all its terms."""
    table = cached_yaml(path)
    out = {}
    for name, terms in table.items():
        words = "|".join(_term(str(t)) for t in terms if str(t).isascii())
        others = "|".join(_term(str(t)) for t in terms if not str(t).isascii())
        alternatives = [f"(?:^|{_EDGE})(?:{words})(?:{_EDGE}|$)"] if words else []
        alternatives += [f"(?:{others})"] if others else []
        out[str(name)] = re2.compile("(?i)" + "|".join(alternatives))
    return out


# Platforms a text is on unless it names one of the others: an operating system (a training log rarely says
# it runs on Linux; it says so by naming macOS).
ASSUMED = {"linux": frozenset({"macos"})}
# Platforms that exist on one operating system only: a text using their words is on it, whatever else it names
# ("I submit from my macOS laptop: srun: error: task 0: Out Of Memory" is a Linux node's OOM killer; a SageMaker
# training job runs in a Linux container whatever launched it).
RUNS_ON = {"slurm": "linux", "sagemaker": "linux"}


def mentioned(text: str) -> frozenset[str]:
    """The platforms whose words ``text`` uses."""
    return frozenset(name for name, pattern in patterns().items() if pattern.search(text))


def off(own: Iterable[str], found: frozenset[str]) -> bool:
    """Whether an entry whose failure exists only on the platforms ``own`` (``Entry.platform``; empty: any) is
    off them in a text that uses the words of ``found`` (:func:`mentioned`): it names none of them, and none is
    an :data:`ASSUMED` platform the text does not rule out by naming another (a platform that runs on one
    operating system only, :data:`RUNS_ON`, names that one too)."""
    own = frozenset(own)
    found = found | {RUNS_ON[p] for p in found if p in RUNS_ON}
    return bool(own) and not own & (found | {p for p, others in ASSUMED.items() if not found & others})


def contradicted(own: Iterable[str], found: frozenset[str]) -> bool:
    """Whether a text names another operating system than the only ones an entry's failure exists on
    (:data:`ASSUMED` platforms only): then the entry's anchors and regexes are no evidence there. A text that
    merely never names SageMaker may still be a SageMaker job's error line."""
    own = frozenset(own)
    return own <= ASSUMED.keys() and off(own, found)
