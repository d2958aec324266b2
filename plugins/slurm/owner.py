"""Acting on a job with its owner's rights, never more.

A job's log path and its processes are chosen by the job's owner, so tracebot opens the log and
py-spys the ranks *as that owner*. For a job of tracebot's own Unix user that is tracebot itself; for
anyone else's job it goes through ``slurm.as_owner``: the argv of the one privilege an admin installs
(scripts/deploy/install-privilege.sh: ``sudo -n /usr/local/libexec/tracebot-as-owner``), which looks up
the owner in SLURM itself, drops to that user and either runs the node dump step or opens the log and
passes the open descriptor back over a Unix socket. Without it, other users' logs are not read at all.
"""

from __future__ import annotations

import math
import os
import pwd
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from tracebot.plugin_api import regular_stream
from tracebot.plugins.slurm.settings import SlurmSettings

OPEN_TIMEOUT_S = 15.0
NO_PRIVILEGE = ("tracebot reads a job's log only with its owner's rights, and this deployment has no "
                "`slurm.as_owner` privilege to do that for other users' jobs (README \"Deploying\")")


class OwnerRefused(OSError):
    """The log could not be opened as its job's owner; the message says why (safe to show)."""


def own_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def job_uid(owner: str, uid: int | None = None) -> int | None:
    """The job owner's uid: SLURM's own where its record gives it (``alice(1001)``), else this host's for the
    name (sacct's rows name no uid); None when neither knows it."""
    if uid is not None:
        return uid
    try:
        return pwd.getpwnam(owner).pw_uid if owner else None
    except KeyError:
        return None


def is_own(owner: str, uid: int | None = None) -> bool:
    """Is the job tracebot's own Unix user's? By uid, never by name: a name can be renamed or reused, and two
    names can be one uid (an alias in the user database)."""
    found = job_uid(owner, uid)
    return found is not None and found == os.getuid()


def name_clash(owner: str, uid: int | None) -> str | None:
    """SLURM names tracebot's own user but with another uid: say so (whose rights to take cannot be told),
    rather than act as tracebot or as whoever that uid is."""
    if uid is None or owner != own_user() or uid == os.getuid():
        return None
    return (f"the job's owner is {owner} with uid {uid} to SLURM, but tracebot runs as {owner} with uid "
            f"{os.getuid()} here: whose rights to take cannot be told")


def dump_argv(settings: SlurmSettings, job_id: str, node: str, limit_s: float) -> list[str]:
    """The privilege's argv for one node's dump of someone else's job (it builds the srun line itself)."""
    return [*settings.as_owner, "dump", job_id, node, str(max(1, math.ceil(limit_s))),
            str(max(1, min(120, math.ceil(settings.pyspy_timeout_s))))]


def log_opener(settings: SlurmSettings, job_id: str, owner: str,
               uid: int | None = None) -> Callable[[Path], BinaryIO] | None:
    """How to open this job's log: None (tracebot's own job: open it here), or an opener that opens it
    as the owner through the privilege, or one that refuses (no privilege configured, or SLURM names
    tracebot's user with another uid)."""
    if is_own(owner, uid):
        return None
    why = name_clash(owner, uid) or (None if settings.as_owner else NO_PRIVILEGE)
    if why:
        def refuse(_path: Path) -> BinaryIO:
            raise OwnerRefused(why)
        return refuse
    return lambda path: open_as_owner(settings.as_owner, job_id, path)


def open_as_owner(privilege: list[str], job_id: str, path: Path) -> BinaryIO:
    """Ask the privilege to open ``path`` as job ``job_id``'s owner; receive the descriptor on a socket."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours:
        try:
            proc = subprocess.Popen([*privilege, "log", job_id, str(path)], stdin=subprocess.DEVNULL, stdout=theirs,
                                    stderr=subprocess.PIPE, text=True, errors="replace")
        except OSError as exc:
            raise OwnerRefused(f"the privilege `{privilege[0]}` could not be run: {exc.strerror or exc}") from exc
        finally:
            theirs.close()
        try:
            _, err = proc.communicate(timeout=OPEN_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.communicate()
            raise OwnerRefused(f"opening the log as the job's owner took over {OPEN_TIMEOUT_S:.0f}s") from exc
        ours.settimeout(1.0)
        try:
            _, fds, _, _ = socket.recv_fds(ours, 16, 1)
        except OSError:
            fds = []
    if proc.returncode != 0 or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        why = next((ln.split("refused: ", 1)[-1] for ln in err.splitlines() if ln.strip()), "")
        raise OwnerRefused(why or f"the privilege exited with status {proc.returncode}")
    return regular_stream(fds[0])
