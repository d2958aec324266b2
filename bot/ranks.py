"""Compact lists of ranks (``0, 2–63, 65``) and of anything else too long to show whole (hosts, nodes)."""

from __future__ import annotations

MAX_RANK_DIGITS = 9


def is_rank_number(label: object) -> bool:
    """``label`` is a rank's number: ASCII digits, nine at most. A label may be a job's own text (its RANK
    variable, a node dump's key): "²" is a digit to ``str.isdigit`` but no number to ``int``, and a number
    of 5,000 digits is past ``int``'s limit; both raised ValueError and ended the trace that listed them."""
    text = str(label)
    return 0 < len(text) <= MAX_RANK_DIGITS and text.isascii() and text.isdigit()


def format_ranks(ranks: list[str] | list[int], limit: int = 12) -> str:
    """Numeric ranks become ranges (``2–63``); other labels are listed as they are, up to ``limit`` items."""
    nums = sorted({int(r) for r in ranks if is_rank_number(r)})
    others = [str(r) for r in ranks if not is_rank_number(r)]
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}–{nums[j]}" if j > i + 1 else f"{nums[i]}, {nums[j]}")
        i = j + 1
    parts += others
    if len(parts) > limit:
        return ", ".join(parts[:limit]) + f" and {len(parts) - limit} more"
    return ", ".join(parts)


def ranks_phrase(labels: list[str]) -> str:
    """``rank 1`` / ``ranks 0, 2–63``; labels that are not numbers (``pid 4242``) speak for themselves."""
    if all(is_rank_number(label) for label in labels):
        return f"{'rank' if len(labels) == 1 else 'ranks'} {format_ranks(labels)}"
    return format_ranks(labels)


def first_few(items: list[str], most: int, sep: str = ", ") -> str:
    """``a, b, c (+5 more)``: the first ``most`` items and how many were left out (every view says it alike)."""
    shown = sep.join(items[:most])
    return shown + (f" (+{len(items) - most} more)" if len(items) > most else "")
