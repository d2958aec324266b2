"""Helpers for the SLURM integration tests: run commands, submit jobs, wait for states, run tracebot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tracebot.plugins.slurm.parse import parse_listpids

REPO = Path(__file__).resolve().parents[3]
JOBS = Path(__file__).resolve().parent / "jobs"
PYTHON = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable
TRACEBOT = str(Path(PYTHON).parent / "tracebot")
START = REPO / "scripts" / "slurm" / "start.sh"
STOP = REPO / "scripts" / "slurm" / "stop.sh"
FIXTURES = REPO / "tests" / "fixtures" / "slurm"
# The deployment the security tests use (scripts/deploy/test-setup.sh): a venv other users can execute,
# the users tracebot/alice/bob, and the privilege tracebot-as-owner with its sudoers drop-in.
DEPLOY_SETUP = REPO / "scripts" / "deploy" / "test-setup.sh"
DEPLOY_PYTHON = str(REPO / ".deploy-venv" / "bin" / "python")
DEPLOY_TRACEBOT = str(REPO / ".deploy-venv" / "bin" / "tracebot")
PRIVILEGE = ["sudo", "-n", "/usr/local/libexec/tracebot-as-owner"]


def as_user(user: str) -> list[str]:
    """The argv prefix that runs a command as ``user`` (root runs the tests)."""
    return ["runuser", "-u", user, "--"]


def run(argv: list[str], timeout: float = 30, check: bool = True, **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    return proc


def sbatch_as(user: str, *args: str) -> str:
    return run([*as_user(user), "sbatch", "--parsable", *args], cwd="/tmp").stdout.strip().split(";")[0]


def user_dir(user: str, name: str, mode: int) -> Path:
    """A fresh directory in ``user``'s home, made by that user with ``mode``."""
    home = Path(os.path.expanduser(f"~{user}"))
    path = home / f"{name}-{uuid.uuid4().hex[:8]}"
    run([*as_user(user), "mkdir", "-m", f"{mode:o}", str(path)])
    return path


def start_cluster() -> None:
    run(["bash", str(START)], timeout=600)


def job_state(job_id: str) -> str:
    out = run(["scontrol", "show", "job", "-o", job_id], check=False).stdout
    for word in out.split():
        if word.startswith("JobState="):
            return word.split("=", 1)[1]
    rows = run(["sacct", "-n", "-X", "-P", "-o", "State", "-j", job_id], check=False).stdout.split()
    return rows[0] if rows else ""


def wait_for(job_id: str, states: set[str], timeout: float = 90) -> str:
    """Poll until the job is in one of ``states`` (bounded); returns the state."""
    end = time.monotonic() + timeout
    state = ""
    while time.monotonic() < end:
        state = job_state(job_id)
        if state in states:
            return state
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not reach {states} within {timeout:.0f}s (last state {state!r})")


def sbatch(*args: str) -> str:
    return run(["sbatch", "--parsable", *args]).stdout.strip().split(";")[0]


@dataclass
class Jobs:
    """The session's real jobs, by role, and the directory their logs go to."""

    logs: Path
    ids: dict[str, str] = field(default_factory=dict)

    def log(self, role: str) -> Path:
        return self.logs / f"{role}-{self.ids[role]}.out"


def train_cmd(script: str) -> str:
    return f"{PYTHON} {JOBS / script}"


def rank_pid(job_id: str, rank: int) -> int:
    """The pid of task ``rank`` of the job's first srun step, as the local slurmd knows it."""
    # Before the step starts, listpids fails ("There are no steps"): no rows, so StopIteration, as when
    # the step has not started all its tasks yet.
    rows = parse_listpids(run(["scontrol", "listpids", job_id], check=False).stdout)
    return next(r.pid for r in rows if r.step_id == "0" and r.global_id == rank)


def _innermost_functions(pid: int) -> list[str]:
    """The main thread's function names, innermost first, as py-spy sees them now ([] if it cannot)."""
    pyspy = str(Path(PYTHON).parent / "py-spy")
    done = subprocess.run([pyspy, "dump", "--json", "--pid", str(pid)], capture_output=True, text=True,
                          timeout=30, check=False)
    try:
        threads = json.loads(done.stdout)
    except json.JSONDecodeError:
        return []
    main = next((t for t in threads if t.get("thread_name") == "MainThread"), threads[0] if threads else None)
    return [f.get("name", "") for f in (main or {}).get("frames", [])]


def wait_until_hung(jobs: Jobs, timeout: float = 120) -> None:
    """Poll (bounded) until the hang job is where the tests need it: rank 0 blocked in all_reduce and rank 1
    in load_next_batch, as py-spy itself sees them. Printing "initialised" is not enough: rank 0 reaches
    all_reduce a moment later."""
    wait_for(jobs.ids["hang"], {"RUNNING"})
    end = time.monotonic() + timeout
    seen: tuple[list[str], list[str]] = ([], [])
    while time.monotonic() < end:
        listed = run(["scontrol", "listpids", jobs.ids["hang"]], check=False)  # no steps yet: not an error
        pids = {r.global_id: r.pid for r in parse_listpids(listed.stdout) if r.step_id == "0"}
        seen = ([], [])
        if 0 in pids and 1 in pids:
            seen = (_innermost_functions(pids[0]), _innermost_functions(pids[1]))
        if any("all_reduce" in f for f in seen[0]) and "load_next_batch" in seen[1]:
            return
        time.sleep(0.5)
    raise AssertionError(f"hang job never reached its hang: rank 0 in {seen[0][:3]}, rank 1 in {seen[1][:3]}")


def tracebot(*words: str, env: dict[str, str] | None = None, prefix: list[str] | None = None,
             timeout: float = 120, exe: str = TRACEBOT) -> tuple[int, dict, float]:
    """``tracebot trace <words> --json`` as a user would run it; returns (exit code, JSON, seconds)."""
    start = time.monotonic()
    proc = subprocess.run([*(prefix or []), exe, "trace", "--json", *words], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd="/tmp", check=False)
    seconds = time.monotonic() - start
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"tracebot printed no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}") from exc
    return proc.returncode, doc, seconds
