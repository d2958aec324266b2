"""A small bilingual glossary of domain words (``glossary.yaml``): what lets different words for the same
thing meet in the word TF-IDF space.

:func:`concepts` lists the concepts a text mentions, as extra words (``≈hang``) the word analyzer
(:func:`tracebot.matcher.tfidf.word_grams`) adds to the text's own: "froze", "stuck" and "ハング" all add
``≈hang``, so a person's description of a symptom shares a word with an entry that names it differently,
and a question in Japanese shares words with an entry written in English.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

GLOSSARY = Path(__file__).with_name("glossary.yaml")
PREFIX = "≈"  # marks a concept among words: no word the word pattern reads starts with it


@cache
def _tables() -> tuple[dict[str, str], dict[str, list[tuple[list[str], str]]], dict[str, str], re.Pattern[str] | None]:
    """One-word English terms → concept; longer ones by their first word (the rest of their words, the
    concept); the other terms → concept, and one pattern that finds them. English terms are split into
    words as the word analyzer splits a text."""
    from tracebot.matcher.tfidf import WORD_PATTERN  # tfidf imports this module

    raw = yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))
    words: dict[str, str] = {}
    longer: dict[str, list[tuple[list[str], str]]] = {}
    others: dict[str, str] = {}
    for concept, terms in raw.items():
        for term in map(str, terms):
            if not term.isascii():
                others[term.lower()] = concept
                continue
            first, *rest = re.findall(WORD_PATTERN, term.lower())
            if rest:
                longer.setdefault(first, []).append((rest, concept))
            else:
                words[first] = concept
    # longest first: メモリ不足 is the oom, not only memory
    pattern = re.compile("|".join(map(re.escape, sorted(others, key=len, reverse=True)))) if others else None
    return words, longer, others, pattern


def concepts(lowered: str, tokens: list[str]) -> list[str]:
    """The concepts (``≈name``) that ``tokens`` (the lower-cased text's words, in order) and the text
    itself mention, once per mention."""
    words, longer, others, pattern = _tables()
    out = [words[t] for t in tokens if t in words]
    for i, t in enumerate(tokens):
        for rest, concept in longer.get(t, ()):
            if tokens[i + 1 : i + 1 + len(rest)] == rest:
                out.append(concept)
    if pattern is not None and not lowered.isascii():
        out += [others[m.group()] for m in pattern.finditer(lowered)]
    return [PREFIX + c for c in out]
