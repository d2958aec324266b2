"""Regex shapes refused in an entry, though RE2 would run them in linear time: a repetition nested in a repetition.

tracebot compiles entry regexes with RE2 (:func:`tracebot.knowledge.loader.compile_pattern`), so ``(a+)+$``
cannot hang the bot. Contributed patterns travel further than the bot, though (grep -P, a Python script,
another tool), and a repeated group that itself repeats never says more than the plain repetition would.
So the loader refuses one, naming the group, and the author writes it flat: ``kb lint``, the start and a
running bot's reload all load through it, so none of them accepts what another refuses.
"""

from __future__ import annotations

_UNBOUNDED = ("*", "+")


def _quantifier_at(pattern: str, i: int) -> tuple[str, int]:
    """The quantifier starting at ``pattern[i]`` ("" if none) and the index after it."""
    if i >= len(pattern):
        return "", i
    c = pattern[i]
    if c in "*+?":
        j = i + 1
        if j < len(pattern) and pattern[j] in "?+":  # lazy / possessive suffix
            j += 1
        return pattern[i:j], j
    if c == "{":
        j = pattern.find("}", i)
        body = pattern[i + 1 : j] if j > 0 else ""
        if body and all(ch.isdigit() or ch == "," for ch in body):
            return pattern[i : j + 1], j + 1
    return "", i


def _repeats(quantifier: str) -> bool:
    """True for a quantifier that can repeat more than once (not ``?``, ``{0,1}``, ``{1}``)."""
    if not quantifier or quantifier[0] == "?":
        return False
    if quantifier[0] in _UNBOUNDED:
        return True
    low, _, high = quantifier.strip("{}").partition(",")
    if "," not in quantifier:
        return int(low or 0) > 1
    return not high or int(high) > 1


def _class_end(pattern: str, i: int) -> int:
    """Index after the character class that opens at ``pattern[i] == "["``."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading "]" is a literal
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def nested_repetition(pattern: str) -> str | None:
    """The first group that repeats and contains a repetition, e.g. ``(a+)+``; None if there is none."""
    stack: list[list] = []  # per open group: [start index, whether something inside it repeats]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "(":
            stack.append([i, False])
            i += 1
            continue
        if c == ")" and stack:
            start, inner = stack.pop()
            q, j = _quantifier_at(pattern, i + 1)
            if inner and _repeats(q):
                return pattern[start:j]
            if stack and (inner or _repeats(q)):
                stack[-1][1] = True
            i = j
            continue
        # one atom: an escape, a character class or a single character, then its quantifier if any
        i = i + 2 if c == "\\" else _class_end(pattern, i) if c == "[" else i + 1
        q, j = _quantifier_at(pattern, i)
        if stack and _repeats(q):
            stack[-1][1] = True
        i = j
    return None
