"""Which platforms a text mentions, from their words of the trade (``platforms.yaml``, beside the glossary).

A knowledge entry may name the platforms its failure exists only on (``platform: sagemaker``); the ranking
model reads whether a candidate entry's platforms are all absent from the text (``off_platform``,
:func:`tracebot.matcher.model.rows`), so an entry written for SageMaker does not answer a plain PyTorch
question because both are about a checkpoint that hangs.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

PLATFORMS = Path(__file__).with_name("platforms.yaml")
# a word of the trade is whole: no letter, digit or underscore on either side (Japanese around it is fine:
# "SageMakerのジョブ")
_BEFORE, _AFTER = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"


def _term(term: str) -> str:
    if not term.isascii():
        return re.escape(term)
    prefix = term.endswith("*")
    words = [re.escape(w) for w in term.rstrip("*").split()]
    body = r"[\s_-]+".join(words) + (r"[\w.]*" if prefix else "")
    return _BEFORE + body + _AFTER


@cache
def patterns(path: Path = PLATFORMS) -> dict[str, re.Pattern[str]]:
    """Per platform, one case-insensitive pattern of all its terms."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    table = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (our own file, safe loader)
    return {
        str(name): re.compile("|".join(_term(str(t)) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
        for name, terms in table.items()
    }


def mentioned(text: str) -> frozenset[str]:
    """The platforms whose words ``text`` uses."""
    return frozenset(name for name, pattern in patterns().items() if pattern.search(text))
