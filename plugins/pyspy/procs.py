"""What /proc says about a process tree: children, owners, and the RANK each worker was started with."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tracebot.plugin_api import is_rank_number, proc_stat

PROC = Path("/proc")
MAX_TARGETS = 512  # a node runs at most a few dozen ranks; this only bounds a runaway tree


@dataclass
class Target:
    """One process to dump and the label it is reported under (``"3"`` for RANK=3, else ``"pid 4242"``)."""

    pid: int
    label: str


def exists(pid: int) -> bool:
    return (PROC / str(pid)).is_dir()


def parent_map() -> dict[int, int]:
    """pid -> ppid for every process (field 4 of /proc/PID/stat, after the parenthesised name)."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (found := proc_stat(int(entry.name), PROC)) is not None:  # None: exited meanwhile
            parents[int(entry.name)] = found.ppid
    return parents


def descendants(pid: int) -> list[tuple[int, int]]:
    """``(child, parent)`` for all children, grandchildren… of ``pid``, breadth first."""
    children: dict[int, list[int]] = {}
    for child, parent in parent_map().items():
        children.setdefault(parent, []).append(child)
    found: list[tuple[int, int]] = []
    queue = [pid]
    while queue and len(found) < MAX_TARGETS:
        parent = queue.pop(0)
        for child in sorted(children.get(parent, [])):
            found.append((child, parent))
            queue.append(child)
    return found[:MAX_TARGETS]


def environ(pid: int) -> dict[str, str]:
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")


def rank_variable(env: dict[str, str]) -> tuple[str, str] | None:
    """The first rank variable set to a number (:func:`is_rank_number`), as ``(name, value)``."""
    for key in RANK_VARIABLES:
        value = env.get(key, "")
        if is_rank_number(value):
            return key, value
    return None


def uids(pid: int) -> tuple[int, ...] | None:
    """Real, effective, saved and file-system uid of the process (/proc/PID/status), or None if it is gone."""
    try:
        status = (PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("Uid:"):
            return tuple(int(u) for u in line.split()[1:])
    return None


def owned_by(pid: int, uid: int) -> bool:
    """Whether every uid of the process is ``uid``: a setuid program or a child that went through sudo
    runs with another effective uid, and reading its memory is not the caller's to do."""
    found = uids(pid)
    return bool(found) and all(u == uid for u in found)


def split_by_owner(found: list[Target], uid: int) -> tuple[list[Target], list[Target]]:
    """``found`` as (the processes ``uid`` owns, the others)."""
    mine = [t for t in found if owned_by(t.pid, uid)]
    return mine, [t for t in found if t not in mine]


def is_python(pid: int) -> bool:
    try:
        exe = os.readlink(PROC / str(pid) / "exe")
    except OSError:
        return False
    return "python" in Path(exe).name


def targets(pid: int) -> list[Target]:
    """The processes to dump for ``/trace pid``.

    A launcher (torchrun, deepspeed, mpirun, a plain parent) is recognised by descendants whose rank
    variable differs from their parent's: those are the ranks. DataLoader workers inherit their rank's
    RANK, so they never count twice. Otherwise: the process itself and its Python descendants,
    labelled by pid.
    """
    tree = descendants(pid)
    envs: dict[int, dict[str, str]] = {}

    def env(p: int) -> dict[str, str]:
        if p not in envs:
            envs[p] = environ(p)
        return envs[p]

    ranked: dict[str, int] = {}
    for child, parent in tree:
        found = rank_variable(env(child))
        if found and env(parent).get(found[0]) != found[1] and found[1] not in ranked:
            ranked[found[1]] = child
    if ranked:
        return [Target(p, r) for r, p in sorted(ranked.items(), key=lambda kv: int(kv[0]))]
    own = rank_variable(env(pid))
    first = Target(pid, own[1] if own else f"pid {pid}")
    return [first, *(Target(c, f"pid {c}") for c, _ in tree if is_python(c))][:MAX_TARGETS]
