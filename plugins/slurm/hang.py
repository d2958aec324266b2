"""Hang trace of a running job: py-spy every rank on every node at once, through the job itself.

For each node, one ``srun --jobid=<id> --overlap --nodes=1 --ntasks=1 --nodelist=<node>`` step runs
:mod:`tracebot.plugins.slurm.node_dump` there (``--overlap`` is what lets a step into a job whose CPUs are all
taken; without it srun waits silently forever). Nodes run in parallel, each with its own time limit;
a node that fails or times out is reported, the others still count.

The step runs ``python -I`` from ``/``: isolated mode puts neither the working directory nor
``PYTHONPATH`` nor the user's site-packages on ``sys.path``, so no user-writable directory can shadow
``tracebot`` or a module it imports. Another user's job is dumped through the ``slurm.as_owner``
privilege (:mod:`tracebot.plugins.slurm.owner`), which runs this same step as the job's owner.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tracebot.plugin_api import Frame, without_secrets
from tracebot.plugins.pyspy.dump import MAX_FRAMES, CappedPipe
from tracebot.plugins.slurm import owner as owner_access
from tracebot.plugins.slurm import signed
from tracebot.plugins.slurm.client import SlurmCli
from tracebot.plugins.slurm.settings import SlurmSettings

MAX_PARALLEL_NODES = 64
# What one node's dump may say (node_dump prints far less: a node runs a few ranks of a few hundred frames).
MAX_NODE_OUTPUT = 32 << 20
MAX_NODE_STDERR = 1 << 20
MAX_RANKS_PER_NODE = 1024
MAX_NOTES = 20
MAX_TEXT_CHARS = 500
MAX_LABEL_CHARS = 40


@dataclass
class HangTrace:
    dumps: dict[str, list[Frame] | str] = field(default_factory=dict)  # rank -> frames or why unreadable
    hosts: dict[str, str] = field(default_factory=dict)  # rank -> node
    pids: dict[str, int | None] = field(default_factory=dict)
    node_errors: dict[str, str] = field(default_factory=dict)  # node -> why it gave no dump
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def unreadable(self) -> dict[str, str]:
        return {rank: why for rank, why in self.dumps.items() if isinstance(why, str)}


def srun_argv(cli: SlurmCli, job_id: str, node: str, settings: SlurmSettings, limit_s: float,
              owner: str = "", uid: int | None = None) -> list[str]:
    """The command that dumps ``node``: srun as ourselves for our own job (by uid; or with no privilege
    configured), else the privilege, which runs the same step as the job's owner."""
    if settings.as_owner and not owner_access.is_own(owner, uid):
        return owner_access.dump_argv(settings, job_id, node, limit_s)
    minutes = max(1, math.ceil(limit_s / 60))
    argv = cli.argv("srun", f"--jobid={job_id}", "--overlap", "--nodes=1", "--ntasks=1", f"--nodelist={node}",
                    f"--time={minutes}", "--mem=0", "--job-name=tracebot-pyspy", "--chdir=/", "--quiet",
                    *settings.srun_extra,
                    settings.node_python, "-I", "-m", "tracebot.plugins.slurm.node_dump", "--job", job_id,
                    "--timeout", f"{settings.pyspy_timeout_s:g}")
    if settings.node_pyspy:
        argv += ["--pyspy", settings.node_pyspy]
    return argv


def _srun_env() -> dict[str, str]:
    """Our environment without SLURM_* job variables (if tracebot itself runs inside an allocation, srun
    must not inherit that job's geometry) and without our secrets: srun exports its environment to the step
    on the job's node, its prolog and SPANK plugins, and the dump there needs no Slack token nor cloud key.

    ``SLURM_JWT`` stays dropped on purpose: it is tracebot's credential (exported, it would reach the job's
    node and its owner), and Slurm does not support srun with JWT anyway (its JWT page: only client to
    slurmctld/slurmdbd; srun with ``SLURM_JWT`` set is unsupported). squeue, sacct and scontrol still get
    it (:mod:`.client`); the dump step needs munge on tracebot's host, and :func:`_srun_reason` says so
    when srun cannot authenticate."""
    return {k: v for k, v in without_secrets().items() if not k.startswith("SLURM_") or k == "SLURM_CONF"}


def run_node(argv: list[str], limit_s: float) -> tuple[dict[str, Any] | None, str | None]:
    """(the node's JSON document, None) or (None, why not). The document is the one line of the step's output
    signed with a key made for this run and written to the step's stdin (:mod:`.signed`): the job's processes
    may have written anything else into that output."""
    key = signed.new_key()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_srun_env(), start_new_session=True)
    out, err = CappedPipe(proc.stdout, MAX_NODE_OUTPUT), CappedPipe(proc.stderr, MAX_NODE_STDERR)
    _give_key(proc, key)
    try:
        proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        # SIGTERM first: srun forwards it and cancels the step, so nothing is left behind on the node.
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except PermissionError:  # the privilege runs as root: sudo relayed the SIGTERM, it ends itself
                proc.kill()
            proc.wait()
        return None, f"no answer within {limit_s:.0f}s (node busy, unreachable, or py-spy stuck)"
    finally:
        out.join(), err.join()
    if out.over:
        return None, (f"the node's dump printed more than {MAX_NODE_OUTPUT >> 20} MB (a job's process wrote into "
                      "the step's output); nothing of it was read")
    found = signed.read_signed(key, out.text())
    if len(found.docs) > 1:
        return None, (f"{len(found.docs)} signed dumps came back where the dumper prints one: a process of the job "
                      "read the dump's key and wrote a document of its own; none of them is shown")
    if found.docs:
        doc = found.docs[0]
        if found.foreign and isinstance(doc.get("notes"), list):
            doc["notes"].insert(0, f"{found.foreign} line(s) in the dump step's output were not the dumper's (a process "
                                "of the job wrote them into it); they were ignored")
        return doc, None
    reason = _srun_reason(err.text()) or f"srun exited with status {proc.returncode} and printed no dump"
    if found.foreign and proc.returncode == 0:
        reason = ("the dump step's output held no document signed by tracebot's dumper, only lines a process of "
                  "the job wrote into it; nothing of it was used")
    return None, reason


def _give_key(proc: subprocess.Popen[bytes], key: str) -> None:
    """The key on the step's stdin (srun passes it to the dumper): never on its command line or in its
    environment, which the job's processes can read in /proc."""
    assert proc.stdin is not None
    try:
        with proc.stdin:
            proc.stdin.write(f"{key}\n".encode())
    except OSError:  # srun ended before it read its stdin: its stderr says why
        pass


_ENDED = ("already completing or completed", "job has already finished", "invalid job id", "has expired",
          "job/step already completing")


def _srun_reason(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for line in lines:
        low = line.lower()
        if any(marker in low for marker in _ENDED):
            return "the job ended before its ranks could be dumped"
        if "task launch" in low and ("communication connection failure" in low or "connection refused" in low):
            # The controller still lists the node, but its slurmd is not answering: stopped, crashed, or cut off.
            return f"the node's slurmd did not answer the dump step (slurmd down or unreachable): {line[:200]}"
        if "munge" in low or "authentication error" in low or "invalid authentication credential" in low:
            return ("srun could not authenticate to SLURM from tracebot's host: the dump step needs munged "
                    "running here with the cluster's key; SLURM_JWT is not passed to srun (a credential, and "
                    "Slurm does not support srun with JWT; README \"Configuration\"): " + line[:200])
        if "access/permission denied" in low:
            return ("SLURM lets only the job's owner (or root) start a step in it, and no `slurm.as_owner` "
                    "privilege is configured (README \"Deploying\")")
    # "slurmstepd: error: execve(): ...: No such file" says why; "task 0: Exited with exit code 2" only that.
    specific = [ln for ln in lines if "error" in ln.lower() and "exited with exit code" not in ln.lower()]
    return (specific or lines or [""])[0][:300]


def trace_job(cli: SlurmCli, job_id: str, nodes: list[str], settings: SlurmSettings, deadline: float,
              owner: str = "", uid: int | None = None) -> HangTrace:
    """Dump all ranks on ``nodes`` of running job ``job_id`` (SLURM's numeric id) owned by ``owner`` (SLURM's
    ``uid`` of them, where known), within ``deadline``."""
    start = time.monotonic()
    limit = max(2.0, min(settings.node_timeout_s, deadline - start - 1.0))
    trace = HangTrace()
    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_NODES, len(nodes)))) as pool:
        futures = {node: pool.submit(run_node, srun_argv(cli, job_id, node, settings, limit, owner, uid), limit)
                   for node in nodes}
        for node, future in futures.items():
            doc, why = future.result()
            if doc is None:
                trace.node_errors[node] = why or "no dump"
                continue
            _merge(trace, node, doc)
    trace.seconds = time.monotonic() - start
    return trace


def _merge(trace: HangTrace, node: str, doc: dict[str, Any]) -> None:
    """Add one node's document. It is read as the job's owner could have written it (any process of the job
    can write into the step's output): values of the wrong type are dropped, texts cut short, and only the
    first :data:`MAX_RANKS_PER_NODE` ranks and :data:`MAX_FRAMES` frames of each are kept."""
    if doc.get("error"):
        trace.node_errors[node] = _short(doc["error"])
    notes = doc.get("notes")
    trace.notes += [f"{node}: {_short(note)}" for note in (notes if isinstance(notes, list) else [])[:MAX_NOTES]]
    ranks = doc.get("ranks")
    entries = list(ranks.items()) if isinstance(ranks, dict) else []
    if len(entries) > MAX_RANKS_PER_NODE:
        trace.notes.append(f"{node}: {len(entries)} ranks reported; the first {MAX_RANKS_PER_NODE} are shown")
    for rank, entry in entries[:MAX_RANKS_PER_NODE]:
        label = _short(rank, MAX_LABEL_CHARS)
        if label in trace.dumps:  # the same rank number on two nodes: keep both, distinguishable
            label = f"{node}:{label}"
        entry = entry if isinstance(entry, dict) else {}
        pid = entry.get("pid") if type(entry.get("pid")) is int else None
        trace.hosts[label] = node
        trace.pids[label] = pid
        frames = entry.get("frames")
        if isinstance(frames, list):
            trace.dumps[label] = [_frame(f) for f in frames[:MAX_FRAMES] if isinstance(f, dict)]
        else:
            why = _short(entry.get("error") or "unreadable")
            trace.dumps[label] = f"{f'pid {pid} on {node}: ' if pid else f'{node}: '}{why}"


def _frame(raw: dict[str, Any]) -> Frame:
    line = raw.get("line")
    return Frame(_short(raw.get("function") or "?"), _short(raw.get("filename") or ""),
                 line if type(line) is int and line > 0 else None)


def _short(value: object, most: int = MAX_TEXT_CHARS) -> str:
    text = str(value)
    return text if len(text) <= most else text[: most - 1] + "…"
