"""Stacks as text the matcher can read, so knowledge entries about hangs point at what py-spy saw.

The text has the shape people paste from ``py-spy dump`` (entries are written from such pastes), plus
one plain sentence per group naming where it is stuck and whether it is the odd one out.
"""

from __future__ import annotations

from collections.abc import Mapping

from tracebot.plugin_api import StackGroup
from tracebot.plugins.pyspy.render import display_path, ranks_phrase, stack_text


def stacks_text(groups: list[StackGroup], unreadable: Mapping[str, str] | None = None) -> str:
    """E.g. ``ranks 0, 2–63 stuck in all_reduce (torch/distributed/distributed_c10d.py)`` and the stacks."""
    lines: list[str] = []
    for group in groups:
        if group.where is not None:
            where = f"{group.where.function} ({display_path(group.where.filename)})"
            odd = " (odd one out: its stack differs from the other ranks)" if group.odd_one_out else ""
            lines.append(f"py-spy: {ranks_phrase(group.ranks)} stuck in {where}{odd}")
    for label, reason in (unreadable or {}).items():
        lines.append(f"py-spy could not read {ranks_phrase([label])}: {reason}")
    lines += [stack_text(group) for group in groups]
    return "\n".join(lines)
