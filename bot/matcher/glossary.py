"""A small bilingual glossary of domain words (``glossary.yaml``): what lets different words for the same
thing meet in the word TF-IDF space.

:meth:`Glossary.concepts` lists the concepts a text mentions, as extra words (``≈hang``) the word analyzer
(:func:`tracebot.matcher.tfidf.word_grams`) adds to the text's own: "froze", "stuck" and "ハング" all add
``≈hang``, so a person's description of a symptom shares a word with an entry that names it differently,
and a question in Japanese shares words with an entry written in English.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tracebot.knowledge.cache import cached_yaml

GLOSSARY = Path(__file__).with_name("glossary.yaml")
PREFIX = "≈"  # marks a concept among words: no word the word pattern reads starts with it


@dataclass(frozen=True)
class Glossary:
    words: dict[str, str]  # one-word English term → concept
    longer: dict[str, list[tuple[list[str], str]]]  # first word of a longer term → (its other words, concept)
    others: dict[str, str]  # a term in another script (matched anywhere: Japanese has no spaces) → concept
    pattern: re.Pattern[str] | None  # finds the others, longest first

    @classmethod
    def load(cls, split: Callable[[str], list[str]], path: Path = GLOSSARY) -> Glossary:
        """``split``: how the word analyzer splits a lower-cased text into words (English terms are split
        the same way, so "multi-node" is the two words a text's "multi-node" becomes)."""
        words: dict[str, str] = {}
        longer: dict[str, list[tuple[list[str], str]]] = {}
        others: dict[str, str] = {}
        for concept, terms in cached_yaml(path).items():
            for term in map(str, terms):
                if not term.isascii():
                    others[term.lower()] = concept
                    continue
                first, *rest = split(term.lower())
                if rest:
                    longer.setdefault(first, []).append((rest, concept))
                else:
                    words[first] = concept
        # longest first: メモリ不足 is the oom, not only memory
        pattern = re.compile("|".join(map(re.escape, sorted(others, key=len, reverse=True)))) if others else None
        return cls(words, longer, others, pattern)

    def concepts(self, lowered: str, tokens: list[str]) -> list[str]:
        """The concepts (``≈name``) that ``tokens`` (the lower-cased text's words, in order) and the text
        itself mention, once per mention."""
        out = [self.words[t] for t in tokens if t in self.words]
        for i, t in enumerate(tokens):
            for rest, concept in self.longer.get(t, ()):
                if tokens[i + 1 : i + 1 + len(rest)] == rest:
                    out.append(concept)
        if self.pattern is not None and not lowered.isascii():
            out += [self.others[m.group()] for m in self.pattern.finditer(lowered)]
        return [PREFIX + c for c in out]
