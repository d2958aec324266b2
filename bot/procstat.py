"""A process's state, parent and start time, read from ``/proc/<pid>/stat``: the one reading of that file, for
the store (whose process owns a row of work: :mod:`tracebot.store.owner`) and for plugins (a launcher's
children, and is the pid still the process that was found: the py-spy plugin), exported through
:mod:`tracebot.plugin_api`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcStat:
    state: str  # "R", "S", "Z" (a zombie: it has exited, only its parent has not collected it yet), …
    ppid: int  # the parent's pid
    start_time: int  # clock ticks since boot: a pid reused by a new process has another one


def proc_stat(pid: int, proc: Path = PROC) -> ProcStat | None:
    """The process's state and start time; None when it is gone, or there is no /proc to read."""
    try:
        stat = (proc / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    fields = stat[stat.rfind(b")") + 1 :].split()  # fields 3 (the state) onwards
    if len(fields) <= 19 or not fields[1].isdigit() or not fields[19].isdigit():
        return None
    return ProcStat(fields[0].decode("ascii", "replace"), int(fields[1]), int(fields[19]))


def start_time(pid: int, proc: Path = PROC) -> int | None:
    """When the process started (clock ticks since boot, field 22 of /proc/PID/stat), or None if it is gone."""
    found = proc_stat(pid, proc)
    return found.start_time if found is not None else None
