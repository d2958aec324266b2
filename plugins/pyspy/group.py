"""Group ranks whose stacks are the same, and say where each group is stuck.

Shared by ``/trace pid`` and ``/trace job`` (SLURM). Two stacks are "the same" when every frame has the
same function and file; line numbers are ignored, because a rank caught a few lines further on in the
same function (a busy loop, a retry) is not in a different situation. A group shows the line of its
``where`` frame only when all its ranks agree on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tracebot.plugin_api import Frame, StackGroup, is_rank_number

_STDLIB = re.compile(r"/lib/python\d+(?:\.\d+)?/(?!site-packages/|dist-packages/)")
_THIRD_PARTY = re.compile(r"/(?:site|dist)-packages/")
_TORCH_DISTRIBUTED = re.compile(r"(?:^|/)torch/distributed/")
_DIGITS = re.compile(r"([0-9]{1,18})")  # ASCII, and short enough for int() (the label may be a job's text)
ODD_SHARE = 0.25  # a group this small next to a clear majority is worth pointing at


def is_torch_distributed(frame: Frame) -> bool:
    return bool(_TORCH_DISTRIBUTED.search(frame.filename))


def is_user_code(frame: Frame) -> bool:
    """Python source outside the standard library and installed packages (the user's training code)."""
    name = frame.filename
    if not name.endswith(".py") or name.startswith("<"):
        return False  # native frames (--native), <frozen ...>, <string>
    return not (_STDLIB.search(name) or _THIRD_PARTY.search(name))


def where_frame(frames: list[Frame]) -> Frame | None:
    """The innermost frame in the user's code or in torch.distributed; else the innermost Python frame."""
    for frame in frames:
        if is_torch_distributed(frame) or is_user_code(frame):
            return frame
    for frame in frames:
        if frame.filename.endswith(".py"):
            return frame
    return frames[0] if frames else None


def rank_sort_key(label: str) -> tuple[int, tuple[str | int, ...]]:
    """Numeric labels in numeric order, then the rest naturally (``"pid 9"`` before ``"pid 12"``)."""
    if is_rank_number(label):
        return (0, (int(label),))
    # re.split with a group alternates text and digits, so equal positions always hold equal types
    return (1, tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(label))))


def group_stacks(dumps: Mapping[str, list[Frame] | str], hosts: Mapping[str, str] | None = None) -> list[StackGroup]:
    """Group readable ranks by identical stacks, mark the odd ones out, and order them smallest first.

    ``dumps`` maps a rank label to its main-thread frames (innermost first) or to the reason it could
    not be read; unreadable ranks are left out here (report them from the same mapping).
    """
    hosts = hosts or {}
    by_key: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for label, frames in dumps.items():
        if isinstance(frames, str):
            continue
        by_key.setdefault(tuple((f.function, f.filename) for f in frames), []).append(label)
    groups: list[StackGroup] = []
    for labels in by_key.values():
        labels.sort(key=rank_sort_key)
        frames = list(dumps[labels[0]])  # type: ignore[arg-type]  # str entries were skipped above
        groups.append(StackGroup(
            ranks=labels, frames=frames, where=_shared_where(frames, [dumps[r] for r in labels]),  # type: ignore[misc]
            hosts=sorted({hosts[r] for r in labels if r in hosts}),
        ))
    _mark_odd_ones_out(groups)
    # Smallest first; between equal sizes the odd one out leads, since it is the one to look at.
    groups.sort(key=lambda g: (len(g.ranks), not g.odd_one_out, rank_sort_key(g.ranks[0])))
    return groups


def _shared_where(frames: list[Frame], members: list[list[Frame]]) -> Frame | None:
    where = where_frame(frames)
    if where is None:
        return None
    index = frames.index(where)
    lines = {member[index].line for member in members}
    return Frame(where.function, where.filename, where.line if len(lines) == 1 else None)


def _mark_odd_ones_out(groups: list[StackGroup]) -> None:
    """Every group but the majority is odd when it is small (<= a quarter of the ranks, at least 1).

    The majority is the largest group; between equally large groups, the one waiting in
    torch.distributed wins, because in a hang the ranks inside a collective are the ones waiting for
    the rank that never arrived. With no clear majority nothing is marked.
    """
    if len(groups) < 2:
        return
    largest = max(len(g.ranks) for g in groups)
    candidates = [g for g in groups if len(g.ranks) == largest]
    if len(candidates) > 1:
        candidates = [g for g in candidates if g.where is not None and is_torch_distributed(g.where)]
    if len(candidates) != 1:
        return
    majority = candidates[0]
    limit = max(1, int(sum(len(g.ranks) for g in groups) * ODD_SHARE))
    for group in groups:
        group.odd_one_out = group is not majority and len(group.ranks) <= limit
