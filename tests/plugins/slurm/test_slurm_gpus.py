"""``/trace gpus <node>`` on the real cluster: which GPU processes belong to no running job.

This machine has no GPU, so there is no real nvidia-smi. One test puts a tiny executable named
``nvidia-smi`` first on PATH: a STAND-IN for the hardware we don't have, printing the CSV format of
the real tool (see tests/fixtures/slurm/nvidia_smi_compute_apps_h100.csv, captured on an H100) with
two real PIDs: a rank of the running hung job, and a process that belongs to no job. Everything else —
``scontrol listpids`` from the real slurmd, ``ps``, the plugin — is real.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plugins.slurm.cluster import Jobs, rank_pid, tracebot, wait_until_hung
from tracebot.config import Config

pytestmark = [pytest.mark.integration]
NODE = socket.gethostname().split(".")[0]


@pytest.fixture
def stray_process() -> Iterator[int]:
    """A process outside any job, like a rank left behind after its job was cancelled."""
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=10)


def stand_in_nvidia_smi(directory: Path, rows: list[str]) -> dict[str, str]:
    script = directory / "nvidia-smi"
    body = "\n".join(["pid, process_name, used_gpu_memory [MiB], gpu_uuid", *rows])
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{body}\nEOF\n")
    script.chmod(0o755)
    return {"PATH": f"{directory}:{os.environ['PATH']}"}


def test_gpu_process_of_no_running_job_is_named_with_the_command_to_clear_it(
        jobs: Jobs, stray_process: int, tmp_path: Path) -> None:
    wait_until_hung(jobs)
    rank0 = rank_pid(jobs.ids["hang"], 0)
    env = stand_in_nvidia_smi(tmp_path, [
        f"{rank0}, python, 30712, GPU-5f0a1c2e-0000-4000-8000-000000000000",
        f"{stray_process}, python, 520, GPU-5f0a1c2e-0000-4000-8000-000000000000",
    ])
    code, doc, _ = tracebot("gpus", NODE, env=env)
    assert doc["data"]["orphans"] == [stray_process]
    assert doc["data"]["job_of_pid"][str(rank0)] == jobs.ids["hang"]
    fix = next(s["text"] for s in doc["sections"] if s["title"] == "To clear them")
    assert f"kill {stray_process}" in fix and f"kill -9 {stray_process}" in fix
    assert str(rank0) not in fix
    row = next(r for r in doc["tables"][0]["rows"] if r[0] == str(stray_process))
    assert row[4] == "none: left over" and "sleep 300" in row[5]
    assert "gpu-zombie-process" in [m["entry_id"] for m in doc["matches"]]
    assert doc["status"] == "warning"


def test_all_gpu_processes_in_jobs_is_a_clean_bill(jobs: Jobs, tmp_path: Path) -> None:
    wait_until_hung(jobs)
    env = stand_in_nvidia_smi(tmp_path, [f"{rank_pid(jobs.ids['hang'], 1)}, python, 30712, GPU-1"])
    _, doc, _ = tracebot("gpus", NODE, env=env)
    assert doc["status"] == "ok" and doc["data"]["orphans"] == []
    assert "belong to running jobs" in doc["summary"]


def test_node_without_nvidia_smi_gets_a_clear_answer(slurm_cluster: None) -> None:
    path = ":".join(p for p in os.environ["PATH"].split(":") if not (Path(p) / "nvidia-smi").exists())
    code, doc, seconds = tracebot("gpus", NODE, env={"PATH": path})
    assert code == 1 and doc["data"]["error"] == "unreachable"
    assert "nvidia-smi` was not found (no NVIDIA driver on this node?)" in doc["summary"]


def test_other_node_without_a_configured_way_to_reach_it_is_refused_plainly(slurm_cluster: None) -> None:
    _, doc, _ = tracebot("gpus", "gpu-node-17")
    assert "no `slurm.node_exec`" in doc["summary"]


@pytest.fixture
def users_gpu_processes() -> Iterator[dict[str, int]]:
    """A left-over process of bob's and one of alice's (real users; setpriv execs, so the pid is the process)."""
    procs = {user: subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups",
                                     "sleep", f"{300 + i}"], start_new_session=True)
             for i, user in enumerate(("bob", "alice"))}
    try:
        yield {user: proc.pid for user, proc in procs.items()}
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait(timeout=10)


def command_lines(result) -> dict[str, str]:
    return {row[0]: row[5] for row in result.tables[0].rows}


@pytest.mark.parametrize(("caller", "grants", "sees_bobs"), [
    ({"cluster_user": "alice"}, {}, False),
    ({"cluster_user": "alice"}, {"alice": ["gpu-*"]}, False),  # a grant for other nodes
    ({"cluster_user": "alice"}, {"alice": [NODE[:1] + "*"]}, True),
    ({"cluster_user": "alice"}, {"U-test": [NODE]}, True),  # granted by Slack user id
    ({"cluster_user": "alice"}, {"@alice": ["*"]}, True),  # granted to a Unix group she is in
    ({"cluster_user": None, "admin": True}, {}, True),
])
def test_other_users_command_lines_are_shown_only_to_admins_and_granted_users(
        slurm_cluster: None, deploy_users: None, users_gpu_processes: dict[str, int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, trace_as, caller: dict, grants: dict, sees_bobs: bool) -> None:
    bob, alice = users_gpu_processes["bob"], users_gpu_processes["alice"]
    env = stand_in_nvidia_smi(tmp_path, [f"{bob}, python, 520, GPU-1", f"{alice}, python, 520, GPU-1"])
    monkeypatch.setenv("PATH", env["PATH"])
    config = Config()
    config.extra = {"slurm": {"gpus": {"allow": grants}}}
    result = trace_as(["gpus", NODE], config=config, **caller)
    lines = command_lines(result)
    assert ("sleep 300" in lines[str(bob)]) is sees_bobs
    assert lines[str(bob)].startswith("bob ")  # whose process it is stays visible: it says whom to ask
    if caller["cluster_user"] == "alice":
        assert "sleep 301" in lines[str(alice)]  # her own command line, always
    assert sorted(result.data["orphans"]) == sorted([bob, alice])
