"""Stack groups as words (the one-line summary, py-spy-style stack text) and as a PNG of coloured ranks."""

from __future__ import annotations

import colorsys
import io
import re
from collections.abc import Mapping

from PIL import Image, ImageDraw, ImageFont

from tracebot.plugin_api import Frame, StackGroup, first_few, ranks_phrase
from tracebot.plugins.pyspy.group import rank_sort_key

MAX_SUMMARY_GROUPS = 6
PNG_MIN_RANKS = 9  # "for more than 8 ranks, a picture"
_INSTALLED = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"^.*/lib/python\d+(?:\.\d+)?/")


def summarise_groups(groups: list[StackGroup], unreadable: Mapping[str, str] | None = None,
                     max_groups: int = MAX_SUMMARY_GROUPS) -> str:
    """``rank 1: load_next_batch (train.py:21) — ranks 0, 2–63: all_reduce (distributed_c10d.py)``."""
    parts = []
    for group in groups[:max_groups]:
        where = group.where.label() if group.where else "no Python frames"
        parts.append(f"{ranks_phrase(group.ranks)}: {where}")
    if len(groups) > max_groups:
        rest = sum(len(g.ranks) for g in groups[max_groups:])
        parts.append(f"{len(groups) - max_groups} more groups ({rest} ranks)")
    if unreadable:
        parts.append(f"unreadable: {ranks_phrase(sorted(unreadable, key=rank_sort_key))}")
    return " — ".join(parts) if parts else "no stacks were read"


def hosts_phrase(hosts: list[str], most: int = 3) -> str:
    """`` on tbnode3`` / `` on n1, n2, n3 (+5 more)`` / ``""`` for a group's hosts."""
    if not hosts:
        return ""
    return f" on {first_few(hosts, most)}"


def display_path(filename: str) -> str:
    """Paths as py-spy prints them: installed packages from the package, stdlib by file name."""
    shorter = _INSTALLED.sub("", filename)
    return shorter if shorter != filename else _STDLIB.sub("", filename)


def frame_line(frame: Frame) -> str:
    path = display_path(frame.filename)
    return f"{frame.function} ({path}:{frame.line})" if frame.line else f"{frame.function} ({path})"


def stack_text(group: StackGroup, max_frames: int = 40) -> str:
    """A group's stack in ``py-spy dump`` layout, innermost first."""
    lines = [f'Thread (MainThread) of {ranks_phrase(group.ranks)}:']
    lines += [f"    {frame_line(f)}" for f in group.frames[:max_frames]]
    if len(group.frames) > max_frames:
        lines.append(f"    … {len(group.frames) - max_frames} outer frames")
    return "\n".join(lines)


# -- PNG -------------------------------------------------------------------------------------------
CELL = 26
GAP = 2
MARGIN = 10
HEADER = 22
LEGEND_ROW = 18
MAX_COLUMNS = 32
UNREADABLE_RGB = (170, 170, 170)
_MAJORITY_RGB = (66, 133, 244)
_PALETTE = [(219, 68, 55), (244, 160, 0), (15, 157, 88), (171, 71, 188), (0, 172, 193),
            (255, 112, 67), (158, 157, 36), (92, 107, 192), (240, 98, 146), (121, 85, 72)]


def group_colours(groups: list[StackGroup]) -> list[tuple[int, int, int]]:
    """One colour per group: blue for the largest group, strong colours for the rest, in order."""
    largest = max(range(len(groups)), key=lambda i: len(groups[i].ranks), default=-1)
    colours: list[tuple[int, int, int]] = []
    others = 0
    for i in range(len(groups)):
        if i == largest:
            colours.append(_MAJORITY_RGB)
            continue
        if others < len(_PALETTE):
            colours.append(_PALETTE[others])
        else:  # many groups: spread further hues (golden-ratio steps) instead of repeating colours
            r, g, b = colorsys.hsv_to_rgb((others * 0.618034) % 1.0, 0.65, 0.85)
            colours.append((int(r * 255), int(g * 255), int(b * 255)))
        others += 1
    return colours


def cell_box(index: int, count: int) -> tuple[int, int, int, int]:
    """Pixel box ``(x0, y0, x1, y1)`` (inclusive) of the ``index``-th rank cell in a picture of ``count``."""
    columns = min(MAX_COLUMNS, max(1, count))
    row, col = divmod(index, columns)
    x0 = MARGIN + col * (CELL + GAP)
    y0 = MARGIN + HEADER + row * (CELL + GAP)
    return x0, y0, x0 + CELL - 1, y0 + CELL - 1


def ordered_labels(groups: list[StackGroup], unreadable: Mapping[str, str] | None = None) -> list[str]:
    """The cell order of :func:`ranks_png`: every rank, numerically."""
    labels = [r for g in groups for r in g.ranks] + list(unreadable or {})
    return sorted(labels, key=rank_sort_key)


def _ascii(text: str) -> str:
    """Pillow's built-in font has no en dash or ellipsis; a box in their place reads as a glitch."""
    return text.replace("–", "-").replace("…", "...").encode("ascii", "replace").decode()


def ranks_png(groups: list[StackGroup], unreadable: Mapping[str, str] | None = None, title: str = "") -> bytes:
    """A grid with one cell per rank, coloured by stack group, and a legend naming each group's frame."""
    labels = ordered_labels(groups, unreadable)
    colours = group_colours(groups)
    colour_of = {r: colours[i] for i, g in enumerate(groups) for r in g.ranks}
    font = ImageFont.load_default()
    many_hosts = len({h for g in groups for h in g.hosts}) > 1
    legend = [(colours[i], f"{ranks_phrase(g.ranks)}{hosts_phrase(g.hosts) if many_hosts else ''}: "
               f"{g.where.label() if g.where else '?'}" + ("  (odd one out)" if g.odd_one_out else ""))
              for i, g in enumerate(groups)]
    if unreadable:
        legend.append((UNREADABLE_RGB, f"unreadable: {ranks_phrase(sorted(unreadable, key=rank_sort_key))}"))
    legend = [(c, _ascii(text if len(text) <= 140 else text[:137] + "...")) for c, text in legend]

    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    last = cell_box(max(0, len(labels) - 1), len(labels))
    grid_right = cell_box(min(len(labels), MAX_COLUMNS) - 1, len(labels))[2] if labels else MARGIN
    text_width = max([measure.textlength(t, font=font) for _, t in legend] + [measure.textlength(title, font=font)])
    width = int(max(grid_right, MARGIN + LEGEND_ROW + text_width) + MARGIN)
    legend_top = last[3] + 2 * GAP + MARGIN
    height = legend_top + LEGEND_ROW * len(legend) + MARGIN

    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN), _ascii(title or f"{len(labels)} ranks by stack group"), fill=(0, 0, 0), font=font)
    for index, label in enumerate(labels):
        x0, y0, x1, y1 = cell_box(index, len(labels))
        draw.rectangle((x0, y0, x1, y1), fill=colour_of.get(label, UNREADABLE_RGB))
        if len(label) <= 4:  # rank numbers fit in a cell; long labels are named in the legend only
            draw.text((x0 + 2, y0 + 1), label, fill=(255, 255, 255), font=font)
    for row, (colour, text) in enumerate(legend):
        y = legend_top + row * LEGEND_ROW
        draw.rectangle((MARGIN, y, MARGIN + 12, y + 12), fill=colour)
        draw.text((MARGIN + LEGEND_ROW, y), text, fill=(0, 0, 0), font=font)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
