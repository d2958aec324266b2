"""Which process owns a row of work, and whether that process is still running.

A token names one process for as long as it lives: host name, kernel boot, pid and the pid's start time
(``/proc/<pid>/stat``), so a pid reused after a restart or a reboot is not mistaken for the old process.
A token from another host (another container, say), or one written where /proc could not be read, cannot be
checked from here: it counts as alive, and only its age lets another process take its work
(:meth:`tracebot.service.inbox.Inbox.adopt`).
"""

from __future__ import annotations

import os
import socket
import uuid
from functools import cache
from pathlib import Path

from tracebot.procstat import proc_stat


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The process's start time in clock ticks since boot; "" without /proc, "Z" for a zombie (it has
    exited: only its parent has not collected it yet)."""
    found = proc_stat(pid)
    if found is None:
        return ""
    return "Z" if found.state == "Z" else str(found.start_time)


@cache
def _boot() -> str:
    return _read("/proc/sys/kernel/random/boot_id")


@cache
def _unknown_start(pid: int) -> str:
    """What stands for a start time that cannot be read (no /proc): "?" and a value of its own, so that a
    process restarted with the same pid (PID 1 in a container) never takes its predecessor's token, whose
    rows ``WHERE owner != ?`` would then hide from it for good."""
    return "?" + uuid.uuid4().hex[:16]


def token(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}|{_boot()}|{pid}|{_started(pid) or _unknown_start(pid)}"


def checkable(owner: str) -> bool:
    """Whether :func:`alive` can tell that ``owner`` is gone: a token of this host's with a start time read
    from /proc. Any other (another host's, one written without /proc) is judged by its age instead."""
    parts = owner.split("|")
    return len(parts) == 4 and same_host(owner) and parts[3] not in ("", "Z") and not parts[3].startswith("?")


def same_host(owner: str) -> bool:
    return owner.split("|", 1)[0] == socket.gethostname()


def alive(owner: str) -> bool:
    """False only when ``owner`` was a process on this host that is gone (or the host rebooted since);
    True for a token that cannot be checked (:func:`checkable`)."""
    parts = owner.split("|")
    if not checkable(owner):
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
