"""Faults, on the real cluster: slurmctld stopped, a job that ends during the trace, py-spy failing on one
rank, a node whose dump step fails, unreadable logs, a 2 GB log, and injection attempts in every argument."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plugins.slurm.cluster import (
    JOBS,
    PYTHON,
    START,
    STOP,
    TRACEBOT,
    Jobs,
    rank_pid,
    run,
    sbatch,
    tracebot,
    train_cmd,
    wait_for,
    wait_until_hung,
)
from tracebot.config import Config
from tracebot.plugin_api import Caller, CommandContext
from tracebot.plugins.slurm.client import SlurmCli
from tracebot.plugins.slurm.command import describe
from tracebot.plugins.slurm.jobinfo import lookup
from tracebot.plugins.slurm.settings import SlurmSettings

pytestmark = [pytest.mark.integration]
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]  # root that obeys file permissions


@pytest.fixture
def controller_stopped(jobs: Jobs) -> Iterator[None]:
    """slurmctld stopped (slurmdbd, slurmd and the running jobs stay up); restarted afterwards."""
    wait_for(jobs.ids["fails"], {"FAILED"})
    wait_until_hung(jobs)  # its srun step must exist before the controller goes: srun needs slurmctld
    # slurmctld tells slurmdbd about a start asynchronously: wait until accounting has it too.
    end = time.monotonic() + 30
    while run(["sacct", "-n", "-X", "-P", "-o", "State", "-j", jobs.ids["hang"]]).stdout.strip() != "RUNNING":
        assert time.monotonic() < end, "accounting never saw the hang job start"
        time.sleep(0.5)
    run(["bash", str(STOP), "slurmctld"], timeout=60)
    try:
        yield
    finally:
        run(["bash", str(START)], timeout=300)
        _wait_until_live_jobs_take_steps(jobs.ids["hang"])


def _wait_until_live_jobs_take_steps(job_id: str, timeout: float = 90) -> None:
    """A restarted controller answers before it has rebuilt running jobs' resources: until then a new step
    in them fails ("Memory required by task is not available"). Later tests trace those jobs, so wait
    (bounded) until a step goes through."""
    end = time.monotonic() + timeout
    while True:
        probe = run(["srun", f"--jobid={job_id}", "--overlap", "--immediate=2", "--nodes=1", "--ntasks=1", "--mem=0",
                     "--time=1", "--quiet", "true"], timeout=20, check=False)
        if probe.returncode == 0:
            return
        assert time.monotonic() < end, f"job {job_id} takes no new step after the restart: {probe.stderr[:300]}"
        time.sleep(0.5)


def test_controller_down_is_answered_within_15s_with_what_accounting_knows(
    jobs: Jobs, controller_stopped: None
) -> None:
    code, doc, seconds = tracebot("job", jobs.ids["fails"])
    assert seconds < 15
    assert doc["data"]["state"] == "FAILED"  # from slurmdbd, which is still up
    assert "slurmctld" in doc["data"]["controller_down"] and "not answering" in doc["summary"]
    code, doc, seconds = tracebot("job", jobs.ids["hang"])
    assert seconds < 15
    assert doc["data"]["state"] == "RUNNING"
    assert any(s["title"] == "No hang trace" for s in doc["sections"])


def test_controller_down_and_unknown_job_says_both(controller_stopped: None) -> None:
    code, doc, seconds = tracebot("job", "987654321")
    assert seconds < 15 and code == 1
    assert "slurmctld" in doc["summary"] and "Accounting (sacct) has no job 987654321" in doc["summary"]


@pytest.fixture
def accounting_stopped(jobs: Jobs) -> Iterator[None]:
    """slurmdbd stopped (the controller and the jobs stay up); restarted afterwards."""
    wait_until_hung(jobs)
    run(["bash", str(STOP), "slurmdbd"], timeout=60)
    try:
        yield
    finally:
        run(["bash", str(START)], timeout=300)


def test_accounting_down_still_traces_live_jobs_and_says_why_old_ones_are_unknown(
        jobs: Jobs, accounting_stopped: None) -> None:
    code, doc, seconds = tracebot("job", "987654321")
    assert seconds < 15 and doc["data"]["error"] == "accounting_down"
    assert "slurmdbd" in doc["summary"] and "slurmctld" not in doc["summary"]
    _, doc, _ = tracebot("job", jobs.ids["hang"])  # the controller alone knows everything a live job needs
    odd = [g["ranks"] for g in doc["stack_groups"] if g["odd_one_out"]]
    assert odd == [["1"]], (doc["summary"], doc["data"].get("hang"))


def test_job_that_ends_during_the_trace_is_reported_as_ended(jobs: Jobs, tmp_path: Path) -> None:
    job = sbatch(
        "-J",
        "ends",
        "-o",
        str(tmp_path / "ends-%j.out"),
        "-n",
        "2",
        "--export=ALL,HANG_MASTER_PORT=29633",
        "--wrap",
        f"srun {train_cmd('hang_train.py')}",
    )
    wait_for(job, {"RUNNING"})
    cli = SlurmCli()
    view = lookup(cli, job).jobs[0]  # what tracebot saw when the user asked: RUNNING
    assert view.base_state == "RUNNING"
    run(["scancel", job])  # ... and then the job ended, before its ranks were dumped
    ctx = CommandContext(caller=Caller("U", "root"), matcher=None)
    result = describe(ctx, cli, SlurmSettings(), view)
    assert result.data.get("ended_during_trace") is True
    assert "ended while tracebot was tracing it" in result.summary
    assert result.data["state"] in ("CANCELLED", "COMPLETING")


def test_rank_py_spy_cannot_read_is_listed_with_the_reason_and_the_rest_still_count(jobs: Jobs) -> None:
    wait_until_hung(jobs)
    stopped = rank_pid(jobs.ids["hang"], 1)
    os.kill(stopped, signal.SIGSTOP)  # a rank that does not respond: py-spy cannot take its stack
    try:
        code, doc, _ = tracebot("job", jobs.ids["hang"])
    finally:
        os.kill(stopped, signal.SIGCONT)
    assert list(doc["unreadable"]) == ["1"]
    assert f"pid {stopped}" in doc["unreadable"]["1"] and "py-spy" in doc["unreadable"]["1"]
    assert [g["ranks"] for g in doc["stack_groups"]] == [["0"]]
    assert doc["stack_groups"][0]["where"]["function"] == "all_reduce"
    assert doc["status"] != "error"


def test_node_whose_dump_step_fails_is_reported_not_fatal(jobs: Jobs, trace_as) -> None:
    wait_until_hung(jobs)
    config = Config(extra={"slurm": {"node_python": "/nonexistent/python3", "node_timeout_s": 20}})
    result = trace_as(["job", jobs.ids["hang"]], config=config)
    errors = result.data["hang"]["node_errors"]
    assert list(errors) == result.data["nodes"]
    assert "/nonexistent/python3" in next(iter(errors.values()))
    assert result.data["state"] == "RUNNING" and result.status != "error"


def test_log_the_bot_may_not_read_is_named_with_the_reason_and_the_state_still_given(jobs: Jobs) -> None:
    wait_for(jobs.ids["port"], {"FAILED"})
    log = jobs.log("port")
    mode = log.stat().st_mode
    log.chmod(0)
    try:
        code, doc, _ = tracebot("job", jobs.ids["port"], prefix=NO_DAC)
    finally:
        log.chmod(mode)
    assert doc["data"]["state"] == "FAILED"
    assert doc["data"]["logs"][0] == {
        "path": str(log),
        "unreadable": "permission denied: tracebot's user may not read it",
    }


def test_deleted_log_is_named_with_the_reason(jobs: Jobs, tmp_path: Path) -> None:
    job = sbatch("-J", "gone", "-o", str(tmp_path / "gone-%j.out"), "--wrap", "echo Traceback; exit 2")
    wait_for(job, {"FAILED"})
    (tmp_path / f"gone-{job}.out").unlink()
    _, doc, _ = tracebot("job", job)
    assert doc["data"].get("state") == "FAILED", doc["summary"]
    assert "does not exist" in doc["data"]["logs"][0]["unreadable"]


def test_2gb_log_is_read_whole_and_its_error_near_the_end_has_its_true_line_number_in_bounded_time_and_memory(
    slurm_cluster: None, tmp_path: Path
) -> None:
    size = 2 << 30
    out, err = tmp_path / "big-%j.out", tmp_path / "big-%j.err"
    job = sbatch(
        "-J",
        "big",
        "-o",
        str(out),
        "-e",
        str(err),
        "--wrap",
        f"{PYTHON} {JOBS / 'big_log.py'} {size}",
    )
    try:
        wait_for(job, {"FAILED"}, timeout=240)
        log = tmp_path / f"big-{job}.out"
        assert log.stat().st_size >= size
        before = int((tmp_path / f"big-{job}.err").read_text().rsplit(":", 1)[1])
        # Measure the CLI's own peak memory: it runs as a child of this small wrapper.
        wrapper = (
            "import resource, subprocess, sys\n"
            f"p = subprocess.run([{TRACEBOT!r}, 'trace', '--json', 'job', {job!r}], capture_output=True, text=True)\n"
            "sys.stdout.write(p.stdout)\n"
            "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        )
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", wrapper],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/tmp",
            check=False,
        )
        seconds = time.monotonic() - start
        doc = json.loads(proc.stdout)
        max_rss_mb = int(proc.stderr.rsplit("MAXRSS_KB", 1)[1].split()[0]) / 1024
        logs = {entry["path"]: entry for entry in doc["data"]["logs"]}
        big = logs[str(log)]
        assert not big["truncated"] and big["size"] >= size  # read whole, not sampled at both ends
        oom = next(e for e in big["errors"] if "CUDA out of memory" in e["text"])
        assert oom["line_no"] == before + 1 and oom["rank"] == "3"
        assert doc["matches"][0]["entry_id"] == "cuda-oom" and doc["matches"][0]["line_no"] == before + 1
        assert seconds < 60  # the command's own limit is 90 s; the log search is budgeted at 20 s
        assert max_rss_mb < 400  # the 2 GB file is streamed, never held
    finally:
        for path in tmp_path.glob("big-*"):
            path.unlink()


COMMAND_WORDS = [
    ["job", "1;id"],
    ["job", "$(touch /tmp/pwned)"],
    ["job", "1", "2"],
    ["job", "--jobid=1"],
    ["job", "-1"],
    ["job", "1_2_3"],
    ["job", "1\n"],
    ["job"],
    ["job", "1 && id"],
    ["job", "../../etc/passwd"],
    ["gpus", "-oProxyCommand=id"],
    ["gpus", "vm;id"],
    ["gpus", "$(id)"],
    ["gpus"],
    ["gpus", "vm", "extra"],
    ["gpus", "vm\n"],
]


@pytest.mark.parametrize("words", COMMAND_WORDS, ids=[repr(" ".join(w)) for w in COMMAND_WORDS])
def test_injection_attempts_are_refused_before_any_process_runs(
    words: list[str], trace_as, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    real_popen = subprocess.Popen

    def spy(*args, **kwargs):  # records, then lets it run: a refused command must start nothing
        started.append(args[0] if args else kwargs.get("args"))
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    result = trace_as(words)
    assert result.status == "error" and result.data["error"] == "usage"
    assert started == []
    assert not Path("/tmp/pwned").exists()


def test_injection_through_the_terminal_command_exits_with_usage(slurm_cluster: None) -> None:
    proc = run([TRACEBOT, "trace", "job", "1;id"], check=False, cwd="/tmp")
    assert proc.returncode == 2
    assert "not a SLURM job id" in proc.stdout + proc.stderr
