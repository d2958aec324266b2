"""Stacks of many ranks into a :class:`Result`: groups, summary, PNG and knowledge entries.

One function for ``/trace pid`` and ``/trace job`` (SLURM), so both say the same thing the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from tracebot.plugin_api import Attachment, CommandContext, Frame, Result, combine_into
from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.pyspy.render import PNG_MIN_RANKS, ranks_png, summarise_groups
from tracebot.plugins.pyspy.stacks_text import stacks_text


def add_stack_report(result: Result, ctx: CommandContext, dumps: Mapping[str, list[Frame] | str],
                     hosts: Mapping[str, str] | None = None, png_title: str = "") -> str:
    """Fill ``result.stack_groups``, ``unreadable``, the PNG (more than 8 ranks) and matching entries.

    ``dumps`` maps a rank label to its main-thread frames or the reason it could not be read. Returns
    the one-line summary (``rank 1: load_next_batch (train.py:21) — ranks 0, 2–63: all_reduce (…)``)
    for the caller to place in its own summary; the status is the caller's too.
    """
    groups = group_stacks(dumps, hosts)
    unreadable = {label: reason for label, reason in dumps.items() if isinstance(reason, str)}
    result.stack_groups = groups
    result.unreadable.update(unreadable)
    if len(dumps) >= PNG_MIN_RANKS:
        png = ranks_png(groups, unreadable, title=png_title or f"{len(dumps)} ranks by stack group")
        result.attachments.append(Attachment("ranks.png", png, "image/png", "Ranks coloured by stack group"))
    combine_into(result, [ctx.match(stacks_text(groups, unreadable))])
    return summarise_groups(groups, unreadable)
