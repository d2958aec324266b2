"""Which process owns a row of work, and whether that process is still running.

A token names one process for as long as it lives: host name, kernel boot, pid and the pid's start time
(``/proc/<pid>/stat``), so a pid reused after a restart or a reboot is not mistaken for the old process.
A token from another host (another container, say) cannot be checked from here: it counts as alive, and
only its age lets another process take its work (:meth:`tracebot.store.Store.adopt_work`).
"""

from __future__ import annotations

import os
import socket
from functools import cache
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The process's start time in clock ticks since boot; "" without /proc, "Z" for a zombie (it has
    exited: only its parent has not collected it yet)."""
    stat = _read(f"/proc/{pid}/stat")
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'
    fields = stat.rpartition(")")[2].split()
    if fields and fields[0] == "Z":
        return "Z"
    return fields[19] if len(fields) > 19 else ""


@cache
def _boot() -> str:
    return _read("/proc/sys/kernel/random/boot_id")


def token(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}|{_boot()}|{pid}|{_started(pid)}"


def same_host(owner: str) -> bool:
    return owner.split("|", 1)[0] == socket.gethostname()


def alive(owner: str) -> bool:
    """False only when ``owner`` was a process on this host that is gone (or the host rebooted since)."""
    parts = owner.split("|")
    if len(parts) != 4 or not same_host(owner):
        return True
    _host, boot, pid_text, started = parts
    if boot != _boot():
        return False
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except ValueError:
        return True  # not a token this module wrote: do not guess
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process holds the pid now: its start time tells
    return _started(pid) == started
