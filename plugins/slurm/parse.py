"""Parsers for the text SLURM prints (``scontrol show ... -o``, ``sacct --parsable2``, ``listpids``).

Pure functions over strings, tested against outputs captured from a real Slurm 22.05 cluster
(``tests/fixtures/slurm/``). No subprocess here: :mod:`tracebot.plugins.slurm.client` runs the commands.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

# scontrol's one-line records are ``Key=Value Key=Value ...``; keys start with a capital letter and may
# contain ``:``, ``/`` and ``_`` (``AllocNode:Sid``, ``CPUs/Task``, ``MCS_label``). Values may contain
# spaces (paths, commands), so a value runs until the next `` Key=``.
_KEY = re.compile(r"(?:^|\s)([A-Z][A-Za-z0-9_:/]*)=")

# What tracebot (and its privilege, scripts/deploy/tracebot-as-owner) decide by: whose rights to act with,
# the job's state, where its log is, which nodes get a py-spy step. The job's owner chooses other values of
# the same line (its name and comment, its script's path, its working directory, its output paths), and one
# may spell " UserId=alice(1001)" or " NodeList=n[1-99999]"; SLURM prints each of these keys once, so a second
# one is a value posing as a key.
DECIDING_KEYS = ("UserId", "JobState", "StdOut", "StdErr", "WorkDir", "NodeList")

SACCT_SEP = "\x1f"  # the delimiter of the captured fixtures; each real question uses sacct_delimiter()


def sacct_delimiter() -> str:
    """A fresh ``sacct --delimiter`` for one question: random, so no job's name, working directory or command
    line (its owner's text, written before tracebot asks) can hold it. A fixed one could be spelled: with a
    newline before it, a ``--wrap`` spelled a whole row of its own, whose User column said "tracebot"."""
    return f"{SACCT_SEP}{secrets.token_hex(8)}{SACCT_SEP}"


class AmbiguousRecord(ValueError):
    """A record names one of :data:`DECIDING_KEYS` twice: which is SLURM's cannot be told (safe to show)."""


def parse_key_values(line: str) -> dict[str, str]:
    """``JobId=5 JobName=a b UserId=root(0)`` -> ``{"JobId": "5", "JobName": "a b", "UserId": "root(0)"}``.

    Raises :class:`AmbiguousRecord` for a record that names one of :data:`DECIDING_KEYS` twice: a job named
    ``x UserId=tracebot(998)`` was otherwise tracebot's own, and its log opened with tracebot's rights."""
    out: dict[str, str] = {}
    keys = list(_KEY.finditer(line))
    for i, m in enumerate(keys):
        name = m.group(1)
        if name in out and name in DECIDING_KEYS:
            raise AmbiguousRecord(f"the job's record names {name} twice (its name, comment or a path spells "
                                  f"`{name}=`), so whose job it is cannot be told; tracebot does not trace it")
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        out.setdefault(name, line[m.end():end].strip())
    return out


def parse_records(text: str) -> list[dict[str, str]]:
    """One dict per non-empty line of ``scontrol show job|step -o`` output. Lines end at "\n" only, as
    scontrol ends them: ``str.splitlines`` also ends one at \x1c-\x1e, \v, \f, \x85 and U+2028/9, which a job's
    name may hold, and cut one job into records of which the first had no owner."""
    return [parse_key_values(line) for line in text.split("\n") if "=" in line]


def parse_sacct(text: str, fields: list[str], sep: str = SACCT_SEP) -> list[dict[str, str]]:
    """Rows of ``sacct --noheader --parsable2 --delimiter=<sep> --format=<fields>`` (``text`` without its last
    newline); ``sep`` must be one no field holds (:func:`sacct_delimiter`).

    Every ``sep`` is then sacct's own, so the rows are told apart by counting them, never by newlines: a
    free-text field may hold newlines (a ``SubmitLine`` with a multi-line ``--wrap``). Between a row's last
    field and the next row's first (``JobID``, which never holds a newline) stands the newline that ends the
    row: the last newline of that piece. Output that does not come to whole rows raises
    :class:`AmbiguousRecord`.
    """
    if not text:
        return []
    pieces = text.split(sep)
    per_row = len(fields) - 1
    if per_row < 1 or (len(pieces) - 1) % per_row:
        raise AmbiguousRecord(f"the job's accounting record has field(s) too many (or too few) for rows of "
                              f"{len(fields)} (a name or a path holds sacct's delimiter), so whose job it is "
                              "cannot be told; tracebot does not trace it")
    rows: list[dict[str, str]] = []
    first = pieces[0]
    for start in range(1, len(pieces), per_row):
        values = [first, *pieces[start:start + per_row]]
        if start + per_row < len(pieces):
            values[-1], newline, first = values[-1].rpartition("\n")
            if not newline:
                raise AmbiguousRecord("sacct's rows are not separated by newlines; tracebot does not trace the job")
        rows.append(dict(zip(fields, values, strict=True)))
    return rows


@dataclass(frozen=True)
class PidRow:
    """One line of ``scontrol listpids``: a process of a job, and its task ids when it is a task."""

    pid: int
    job_id: str
    step_id: str
    local_id: int | None
    global_id: int | None


def parse_listpids(text: str) -> list[PidRow]:
    rows: list[PidRow] = []
    for line in text.splitlines():
        cols = line.split()
        if len(cols) < 5 or not cols[0].isdigit():
            continue  # the header, or noise
        rows.append(PidRow(int(cols[0]), cols[1], cols[2], _int_or_none(cols[3]), _int_or_none(cols[4])))
    return rows


def _int_or_none(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def user_of(field: str) -> str:
    """``root(0)`` -> ``root``; a bare name stays as is."""
    return field.split("(", 1)[0].strip()


def uid_of(field: str) -> int | None:
    """``root(0)`` -> 0; None when SLURM gave no uid."""
    m = re.fullmatch(r"[^()]*\((\d+)\)", field.strip())
    return int(m.group(1)) if m else None


def duration_seconds(text: str) -> int | None:
    """SLURM durations: ``MM:SS``, ``HH:MM:SS``, ``D-HH:MM:SS`` (also ``UNLIMITED`` -> None)."""
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.\d+)?", text.strip())
    if not m:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def exit_code(text: str) -> tuple[int, int] | None:
    """``1:0`` -> (return code 1, signal 0)."""
    m = re.fullmatch(r"(\d+):(\d+)", text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None
