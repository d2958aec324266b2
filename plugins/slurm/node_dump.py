"""Runs ON a compute node, inside the job (``srun --jobid=<id> --overlap``): dump every rank there.

``python -m tracebot.plugins.slurm.node_dump --job <id> [--pyspy PATH] [--timeout S]`` finds the job's
processes on this node (``scontrol listpids``, answered by the local slurmd), keeps the Python ones,
names each by its rank (``RANK`` from /proc/PID/environ as torchrun sets it, else ``SLURM_PROCID``,
else the task id from listpids), runs py-spy on all of them in parallel and prints one JSON document,
signed with the key tracebot writes to its stdin (:mod:`tracebot.plugins.slurm.signed`; it locks itself
before it reads the key, so that the job's processes can neither read the key nor ptrace it):

    tracebot-node-dump <mac> {"node": "...", "job": "...", "ranks": {"0": {"pid": 7905, "frames": [...]},
                                           "1": {"pid": 7906, "error": "py-spy timed out ..."}},
     "notes": [...]}

Launchers (torchrun, a ``python`` wrapper) are dropped when their children carry ranks; DataLoader
workers inherit their rank's RANK and are dropped in favour of the rank's top process.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from dataclasses import asdict
from typing import Any

from tracebot.plugins.pyspy import procs
from tracebot.plugins.pyspy.dump import DEFAULT_TIMEOUT_S, ProcessDump, dump_many, find_pyspy
from tracebot.plugins.pyspy.group import rank_sort_key
from tracebot.plugins.slurm import signed
from tracebot.plugins.slurm.client import SlurmCli, SlurmError
from tracebot.plugins.slurm.ids import JOB_ID
from tracebot.plugins.slurm.parse import PidRow


def _own_tree() -> set[int]:
    """This process and its ancestors: our own srun step must not be dumped as a rank."""
    return _ancestors(os.getpid(), procs.parent_map())


def rank_targets(rows: list[PidRow], own_step: str | None, own_tree: set[int]
                 ) -> tuple[list[procs.Target], dict[str, str]]:
    """(processes to dump labelled by rank, tasks with no Python in them -> reason)."""
    rows = [r for r in rows if r.pid not in own_tree and (own_step is None or r.step_id != own_step)]
    parents = procs.parent_map()
    by_rank: dict[str, list[int]] = {}
    started_with_rank: set[int] = set()
    for row in rows:
        if not procs.is_python(row.pid):
            continue
        found = procs.rank_variable(procs.environ(row.pid))
        if found and found[0] == "RANK":
            started_with_rank.add(row.pid)
        label = found[1] if found else (str(row.global_id) if row.global_id is not None else f"pid {row.pid}")
        by_rank.setdefault(label, []).append(row.pid)
    if started_with_rank:  # torchrun-style: only processes started with RANK are ranks (not the launcher)
        by_rank = {label: [p for p in pids if p in started_with_rank] for label, pids in by_rank.items()}
        by_rank = {label: pids for label, pids in by_rank.items() if pids}
    targets = []
    for label, pids in by_rank.items():
        top = [p for p in pids if parents.get(p) not in pids] or pids
        targets.append(procs.Target(min(top), label))
    # A task (srun rank) with no Python process in or under it: say so rather than drop it silently.
    holders = {a for t in targets for a in _ancestors(t.pid, parents)}
    not_python: dict[str, str] = {}
    for row in rows:
        if row.global_id is None or row.step_id == "batch" or row.pid in holders:
            continue
        label = str(row.global_id)
        if label not in by_rank and label not in not_python:
            not_python[label] = f"pid {row.pid} ({_comm(row.pid)}) is not a Python process"
    return sorted(targets, key=lambda t: rank_sort_key(t.label)), not_python


def _ancestors(pid: int, parents: dict[int, int]) -> set[int]:
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        pid = parents.get(pid, 0)
    return seen


def _comm(pid: int) -> str:
    try:
        return (procs.PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return "exited"


def dump_node(job: str, pyspy: list[str], timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"node": socket.gethostname().split(".")[0], "job": job, "ranks": {}, "notes": []}
    try:
        rows = SlurmCli().listpids(job)
    except SlurmError as exc:
        out["error"] = f"scontrol listpids failed: {exc}"
        return out
    targets, not_python = rank_targets(rows, os.environ.get("SLURM_STEP_ID"), _own_tree())
    if not targets and not not_python:
        out["notes"].append("no processes of the job are running on this node (it may have just ended)")
    results = dump_many([t.pid for t in targets], timeout=timeout, pyspy=pyspy)
    for target in targets:
        outcome = results[target.pid]
        if isinstance(outcome, ProcessDump):
            out["ranks"][target.label] = {"pid": target.pid, "frames": [asdict(f) for f in outcome.frames],
                                          "thread": outcome.thread_name, "threads": outcome.threads}
        else:
            out["ranks"][target.label] = {"pid": target.pid, "error": outcome}
    for label, reason in not_python.items():
        out["ranks"].setdefault(label, {"pid": None, "error": reason})
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        signed.lock()  # first: until now, any process of the job's owner could open our descriptors
    except (signed.Unlocked, OSError) as exc:
        print(f"node_dump: error: not dumping: {exc}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="node_dump", description=__doc__.split("\n\n")[0])
    parser.add_argument("--job", required=True)
    parser.add_argument("--pyspy", default=None, help="py-spy executable on this node")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per process")
    args = parser.parse_args(argv)
    if not JOB_ID.fullmatch(args.job):
        parser.error("--job must be a SLURM job id")
    try:
        key = signed.read_key(sys.stdin.buffer)
    except ValueError as exc:
        print(f"node_dump: error: {exc}", file=sys.stderr)
        return 2
    doc = dump_node(args.job, find_pyspy(args.pyspy), max(1.0, min(args.timeout, 120.0)))
    sys.stdout.write(signed.sign(key, doc) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
