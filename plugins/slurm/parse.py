"""Parsers for the text SLURM prints (``scontrol show ... -o``, ``sacct --parsable2``, ``listpids``).

Pure functions over strings, tested against outputs captured from a real Slurm 22.05 cluster
(``tests/fixtures/slurm/``). No subprocess here: :mod:`tracebot.plugins.slurm.client` runs the commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# scontrol's one-line records are ``Key=Value Key=Value ...``; keys start with a capital letter and may
# contain ``:``, ``/`` and ``_`` (``AllocNode:Sid``, ``CPUs/Task``, ``MCS_label``). Values may contain
# spaces (paths, commands), so a value runs until the next `` Key=``.
_KEY = re.compile(r"(?:^|\s)([A-Z][A-Za-z0-9_:/]*)=")

# What tracebot (and its privilege, scripts/deploy/tracebot-as-owner) decide by: whose rights to act with,
# the job's state, where its log is. The job's owner chooses other values of the same line (its name and
# comment, its script's path, its working directory, its output paths), and one may spell " UserId=alice(1001)";
# SLURM prints each of these keys once, so a second one is a value posing as a key.
DECIDING_KEYS = ("UserId", "JobState", "StdOut", "StdErr", "WorkDir")

SACCT_SEP = "\x1f"  # sacct --delimiter: no job name or path holds it in practice (one that does is refused)


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
    """One dict per non-empty line of ``scontrol show job|step -o`` output."""
    return [parse_key_values(line) for line in text.splitlines() if "=" in line]


def parse_sacct(text: str, fields: list[str]) -> list[dict[str, str]]:
    """Rows of ``sacct --noheader --parsable2 --delimiter=<SACCT_SEP> --format=<fields>``.

    A field with an embedded newline (a ``SubmitLine`` with ``--wrap`` over several lines) splits a
    record across lines; such pieces are joined back until the record has all its fields. A record with
    more fields than asked for raises :class:`AmbiguousRecord`.
    """
    rows: list[dict[str, str]] = []
    pending = ""
    for line in text.split("\n"):
        candidate = f"{pending}\n{line}" if pending else line
        parts = candidate.split(SACCT_SEP)
        if len(parts) < len(fields):
            pending = candidate
            continue
        pending = ""
        if len(parts) > len(fields):
            # A free-text field holds the delimiter: the job's name, working directory or sbatch line, all
            # its owner's to choose. Which one cannot be told, and a name "x<SEP>tracebot" would move every
            # field after it: the User column would read "tracebot".
            raise AmbiguousRecord(f"the job's accounting record has {len(parts) - len(fields)} field(s) too "
                                  "many (its name or a path holds sacct's delimiter), so whose job it is cannot "
                                  "be told; tracebot does not trace it")
        rows.append(dict(zip(fields, parts, strict=True)))
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
