"""``/trace gpus <node>``: GPU processes that belong to no running job on that node (seed 003's zombie check).

On the node: ``nvidia-smi --query-compute-apps`` lists the processes holding GPU memory and
``scontrol listpids`` (the local slurmd) lists every process of every job there. A GPU process in the
first list and not in the second is left over from a job that is gone. The node is this host, or is
reached through ``slurm.node_exec`` (an admin-configured argv prefix such as ssh).
"""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass

from tracebot.plugins.slurm.parse import parse_listpids
from tracebot.plugins.slurm.settings import SlurmSettings

QUERY = ["--query-compute-apps=pid,process_name,used_memory,gpu_uuid", "--format=csv,nounits"]
DEFAULT_COLUMNS = ["pid", "process_name", "used_memory", "gpu_uuid"]


class NodeUnreachable(RuntimeError):
    """The node could not be asked (no node_exec for a remote node, ssh failed, tool missing)."""


@dataclass
class GpuProcess:
    pid: int
    process_name: str
    used_mib: int | None
    gpu_uuid: str


def _column(name: str) -> str:
    """``used_gpu_memory [MiB]`` -> ``used_memory``; header names as nvidia-smi prints them."""
    base = name.split("[", 1)[0].strip().lower()
    return {"used_gpu_memory": "used_memory", "name": "process_name"}.get(base, base)


class BrokenTable(ValueError):
    """nvidia-smi's table has a line that is not a whole row: which pid is which cannot be told."""


def parse_compute_apps(text: str) -> list[GpuProcess]:
    """Rows of ``--query-compute-apps`` CSV, with or without header and units.

    Process names are chosen by whoever started the process and may contain commas, so a row is read
    outside-in: the columns left and right of ``process_name`` are fixed, the name is what remains. A name may
    hold a line break too, which cuts its row in two: the part after it could read as a whole row of any pid
    ("1, /usr/sbin/sshd, 100, GPU-…"), which the answer would then call left over and tell admins to kill. A
    line with commas that is not a whole row raises :class:`BrokenTable` instead.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    columns = DEFAULT_COLUMNS
    if lines and "pid" in lines[0].lower() and not lines[0].split(",")[0].strip().isdigit():
        columns = [_column(c) for c in lines[0].split(",")]
        lines = lines[1:]
    if "pid" not in columns or "process_name" not in columns:
        return []
    name_at = columns.index("process_name")
    right = len(columns) - name_at - 1
    out: list[GpuProcess] = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < len(columns):
            if len(parts) > 1:
                raise BrokenTable("nvidia-smi's process table has a line that is not a whole row (a process name "
                                  "with a line break in it?), so which pid is which cannot be told")
            continue  # "No running processes found" and other prose
        name = ", ".join(parts[name_at:len(parts) - right])
        cells = dict(zip(columns, parts[:name_at] + [name] + parts[len(parts) - right:], strict=True))
        if not cells["pid"].isdigit():
            continue
        memory = cells.get("used_memory", "").removesuffix("MiB").strip()
        out.append(GpuProcess(int(cells["pid"]), name, int(memory) if memory.isdigit() else None,
                              cells.get("gpu_uuid", "")))
    return out


def orphans(processes: list[GpuProcess], job_of_pid: dict[int, str]) -> list[GpuProcess]:
    """GPU processes no running job owns."""
    return [p for p in processes if p.pid not in job_of_pid]


def is_local(node: str) -> bool:
    names = {"localhost", socket.gethostname(), socket.gethostname().split(".")[0]}
    return node in names


@dataclass
class PsRow:
    """One process as ``ps`` on the node sees it."""

    uid: int  # who owns it: compared with the caller's uid (a user name in ps output may be cut short)
    text: str  # "user etime stat args"


# user:32 prints names in full where plain `user` cuts them to 8 columns ("longuse+")
PS_FIELDS = "pid=,uid=,user:32=,etime=,stat=,args="


@dataclass
class NodeGpuView:
    processes: list[GpuProcess]
    job_of_pid: dict[int, str]
    details: dict[int, PsRow]  # the leftover GPU processes, by pid


def inspect_node(node: str, settings: SlurmSettings, timeout: float) -> NodeGpuView:
    prefix: list[str] = []
    if not is_local(node):
        if not settings.node_exec:
            raise NodeUnreachable(f"{node} is not this host and no `slurm.node_exec` (e.g. ssh) is configured "
                                  "to reach other nodes; run tracebot on the node or ask an admin to set it.")
        prefix = [*settings.node_exec, "--", node]
    smi = _run(prefix, [settings.nvidia_smi, *QUERY], timeout, what="nvidia-smi")
    try:
        processes = parse_compute_apps(smi)
    except BrokenTable as exc:
        raise NodeUnreachable(str(exc)) from exc
    scontrol = f"{settings.bin_dir}/scontrol" if settings.bin_dir else "scontrol"
    pids = parse_listpids(_run(prefix, [scontrol, "listpids"], timeout, what="scontrol listpids",
                               ok_codes=(0, 1)))
    leftover = [p.pid for p in orphans(processes, {r.pid: r.job_id for r in pids})]
    details = ps_details(prefix, leftover, timeout) if leftover else {}
    return NodeGpuView(processes, {r.pid: r.job_id for r in pids}, details)


def ps_details(prefix: list[str], pids: list[int], timeout: float) -> dict[int, PsRow]:
    """Owner uid and ``user etime stat args`` of each of ``pids`` still running (``prefix``: on a node)."""
    ps = _run(prefix, ["ps", "-o", PS_FIELDS, "-p", ",".join(map(str, pids))], timeout, what="ps", ok_codes=(0, 1))
    details: dict[int, PsRow] = {}
    for line in ps.splitlines():
        fields = line.split(maxsplit=2)
        if len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit():
            details[int(fields[0])] = PsRow(int(fields[1]), " ".join(fields[2].split())[:200])
    return details


def _run(prefix: list[str], argv: list[str], timeout: float, what: str, ok_codes: tuple[int, ...] = (0,)) -> str:
    try:
        proc = subprocess.run([*prefix, *argv], capture_output=True, text=True, errors="replace",
                              timeout=timeout, check=False)
    except FileNotFoundError as exc:
        if prefix:
            raise NodeUnreachable(f"`{prefix[0]}` (slurm.node_exec) was not found on this host") from exc
        hint = " (no NVIDIA driver on this node?)" if what == "nvidia-smi" else ""
        raise NodeUnreachable(f"`{argv[0]}` was not found{hint}") from exc
    except subprocess.TimeoutExpired as exc:
        raise NodeUnreachable(f"{what} gave no answer within {timeout:.0f}s") from exc
    if proc.returncode not in ok_codes:
        first = next((ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()), "")
        if prefix and proc.returncode == 127 and what == "nvidia-smi":
            raise NodeUnreachable("nvidia-smi was not found on the node (no NVIDIA driver there?)")
        raise NodeUnreachable(f"{what} failed (exit {proc.returncode}): {first[:200]}")
    return proc.stdout
