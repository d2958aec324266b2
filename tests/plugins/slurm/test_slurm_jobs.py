"""``tracebot trace job`` against real jobs on the real cluster (this host's node): each gets the right state and
advice, the failed job's log its first error and knowledge entry, and the hung 2-rank gloo job a py-spy
trace naming rank 1 as the odd one out while rank 0 waits in all_reduce."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.plugins.slurm.cluster import (
    JOBS,
    PYTHON,
    TRACEBOT,
    Jobs,
    run,
    sbatch,
    tracebot,
    train_cmd,
    wait_for,
    wait_until_hung,
)
from tracebot.result import Result

pytestmark = [pytest.mark.integration]


def test_completed_job_is_reported_completed_with_exit_code_0(jobs: Jobs) -> None:
    wait_for(jobs.ids["completes"], {"COMPLETED"})
    code, doc, _ = tracebot("job", jobs.ids["completes"])
    assert code == 0
    assert doc["data"]["state"] == "COMPLETED"
    assert "exit code 0" in doc["summary"]
    assert "last step" in doc["data"]["advice"]  # completed is not proof that training finished


def test_failed_job_gives_its_exit_code_and_where_to_look(jobs: Jobs) -> None:
    wait_for(jobs.ids["fails"], {"FAILED"})
    code, doc, _ = tracebot("job", jobs.ids["fails"])
    assert doc["data"]["state"] == "FAILED"
    assert "exit code 3" in doc["summary"]
    assert "first error" in doc["data"]["advice"]
    assert code == 1  # the CLI says "something failed" in its exit status too


def test_failed_job_log_error_is_found_with_its_line_and_matched_root_cause_first(jobs: Jobs) -> None:
    wait_for(jobs.ids["port"], {"FAILED"})
    code, doc, _ = tracebot("job", jobs.ids["port"])
    lines = jobs.log("port").read_text().splitlines()
    expected = next(i for i, line in enumerate(lines, 1) if "EADDRINUSE" in line)
    log = doc["data"]["logs"][0]
    assert log["path"] == str(jobs.log("port"))
    assert any(e["line_no"] == expected and "DistNetworkError" in e["text"] for e in log["errors"])
    first = doc["matches"][0]
    assert (first["entry_id"], first["role"], first["line_no"]) == ("master-port-in-use", "root-cause", expected)
    assert f"Cause, line {expected}: `torch.distributed.DistNetworkError" in doc["summary"]  # the answer first


def test_cancelled_job_says_who_cancelled_it(slurm_cluster: None, tmp_path) -> None:
    # Its own job: Slurm 22.05 forgets "by <uid>" of jobs it still held when slurmctld restarted (the
    # controller-down tests restart it), so the session's jobs may not keep it.
    job = sbatch("-J", "cancelled", "-o", str(tmp_path / "c-%j.out"), "--wrap", "sleep 600")
    wait_for(job, {"RUNNING"})
    run(["scancel", job])
    wait_for(job, {"CANCELLED"})
    _, doc, _ = tracebot("job", job)
    assert doc["data"]["state"] == "CANCELLED"
    assert doc["data"]["state_detail"] == "by root"
    assert "Nothing crashed" in doc["data"]["advice"]


@pytest.mark.parametrize(("role", "reason", "words"), [
    ("later", "BeginTime", "start later"),
    ("held", "JobHeldUser", "scontrol release"),
    ("after", "Dependency", "depends on"),
])
def test_pending_job_gives_the_reason_in_words_and_what_it_asked_for(jobs: Jobs, role: str, reason: str,
                                                                      words: str) -> None:
    wait_for(jobs.ids[role], {"PENDING"})
    _, doc, _ = tracebot("job", jobs.ids[role])
    assert doc["data"]["state"] == "PENDING"
    assert doc["data"]["reason"] == reason
    assert words in doc["data"]["reason_meaning"] + doc["data"]["advice"]
    asked = next(s["text"] for s in doc["sections"] if s["title"] == "What it asked for")
    assert "cpu=1" in asked and "partition `debug`" in asked


def test_hung_gloo_job_names_rank_1_odd_one_out_and_rank_0_waiting_in_all_reduce(jobs: Jobs) -> None:
    wait_until_hung(jobs)
    code, doc, seconds = tracebot("job", jobs.ids["hang"])
    assert doc["data"]["state"] == "RUNNING"
    groups = {tuple(g["ranks"]): g for g in doc["stack_groups"]}
    assert set(groups) == {("0",), ("1",)}
    odd, waiting = groups[("1",)], groups[("0",)]
    assert odd["odd_one_out"] and not waiting["odd_one_out"]
    assert odd["where"]["function"] == "load_next_batch" and odd["where"]["filename"].endswith("hang_train.py")
    assert waiting["where"]["function"] == "all_reduce"
    assert waiting["where"]["filename"].endswith("torch/distributed/distributed_c10d.py")
    assert "Odd one out: rank 1 in load_next_batch" in doc["summary"]
    assert "rank 0 waits in all_reduce" in doc["summary"]
    assert doc["data"]["hang"]["hosts"] == {"0": doc["data"]["nodes"][0], "1": doc["data"]["nodes"][0]}
    assert doc["unreadable"] == {}
    assert "distributed-hang-py-spy" in [m["entry_id"] for m in doc["matches"]]  # the entry the stacks point to
    steps = next(t for t in doc["tables"] if t["title"] == "Steps")
    assert steps["rows"][-1][:3] == ["0", "python", "RUNNING"]


def test_hung_job_text_output_reads_like_the_issue(jobs: Jobs) -> None:
    wait_until_hung(jobs)
    out = run([TRACEBOT, "trace", "job", jobs.ids["hang"]], timeout=120, check=False, cwd="/tmp").stdout
    assert "rank 1: load_next_batch (hang_train.py:" in out
    assert "rank 0: all_reduce (distributed_c10d.py:" in out


def test_someone_elses_job_is_refused_before_anything_is_read(jobs: Jobs, trace_as) -> None:
    result: Result = trace_as(["job", jobs.ids["hang"]], cluster_user="alice")
    assert result.status == "error" and result.data["error"] == "not_allowed"
    assert "not yours" in result.summary
    assert not result.stack_groups and "logs" not in result.data
    admin = trace_as(["job", jobs.ids["later"]], cluster_user=None, admin=True)
    assert admin.data["state"] == "PENDING"


def test_unmapped_slack_user_is_told_to_get_mapped(jobs: Jobs, trace_as) -> None:
    result = trace_as(["job", jobs.ids["completes"]], cluster_user=None)
    assert result.data["error"] == "not_allowed" and "not mapped" in result.summary


def test_timeout_job_says_it_hit_the_time_limit(jobs: Jobs) -> None:
    wait_for(jobs.ids["timeout"], {"TIMEOUT"}, timeout=180)
    _, doc, _ = tracebot("job", jobs.ids["timeout"])
    assert doc["data"]["state"] == "TIMEOUT"
    assert "time limit" in doc["data"]["meaning"] and "--time" in doc["data"]["advice"]
    assert any("DUE TO TIME LIMIT" in e["text"] for e in doc["data"]["logs"][0]["errors"])


def test_unknown_job_id_is_answered_plainly(slurm_cluster: None) -> None:
    code, doc, _ = tracebot("job", "987654321")
    assert code == 1 and doc["data"]["error"] == "no_such_job"
    assert "No job 987654321" in doc["summary"]


def test_array_parent_lists_its_tasks_and_a_task_id_is_traced_directly(jobs: Jobs, tmp_path) -> None:
    array = sbatch("-J", "arr", "-o", str(tmp_path / "arr-%A_%a.out"), "--array=1-2", "--wrap", "echo task $SLURM_ARRAY_TASK_ID")
    wait_for(f"{array}_2", {"COMPLETED"})
    wait_for(f"{array}_1", {"COMPLETED"})
    _, parent, _ = tracebot("job", array)
    assert sorted(p["display_id"] for p in parent["data"]["parts"]) == [f"{array}_1", f"{array}_2"]
    _, task, _ = tracebot("job", f"{array}_2")
    assert task["data"]["state"] == "COMPLETED"
    assert task["data"]["logs"][0]["path"] == str(tmp_path / f"arr-{array}_2.out")


def test_het_job_component_is_traced_by_its_plus_id(jobs: Jobs, tmp_path) -> None:
    script = tmp_path / "het.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH -o {tmp_path}/het-%j.out\n#SBATCH -n 1\n#SBATCH hetjob\n#SBATCH -n 1\ntrue\n")
    het = sbatch("--hold", str(script))
    try:
        _, doc, _ = tracebot("job", f"{het}+1")
        assert doc["data"]["job"]["display_id"] == f"{het}+1"
        assert doc["data"]["state"] == "PENDING"
    finally:
        run(["scancel", het], check=False)


def test_more_than_8_ranks_come_with_a_picture_and_the_odd_rank_named(slurm_cluster: None, tmp_path) -> None:
    job = sbatch("-J", "many", "-o", str(tmp_path / "many-%j.out"), "-n", "10", "--overcommit",
                 "--wrap", f"srun {train_cmd('many_ranks.py')}")
    try:
        wait_for(job, {"RUNNING"})
        log, end = tmp_path / f"many-{job}.out", time.monotonic() + 60
        while not log.exists() or log.read_text().count(" up") < 10:
            assert time.monotonic() < end, "the ranks never came up"
            time.sleep(0.5)
        _, doc, _ = tracebot("job", job, "--out", str(tmp_path / "png"))
        assert [g["ranks"] for g in doc["stack_groups"] if g["odd_one_out"]] == [["4"]]
        assert "rank 4 in read_shard" in doc["summary"] and "ranks 0–3, 5–9 wait in wait_for_peers" in doc["summary"]
        png = next(a for a in doc["attachments"] if a["mimetype"] == "image/png")
        assert Path(png["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        run(["scancel", job], check=False)


def test_suspended_job_is_not_py_spied_and_says_why(slurm_cluster: None, tmp_path) -> None:
    job = sbatch("-J", "paused", "-o", str(tmp_path / "p-%j.out"), "--wrap", "sleep 600")
    try:
        wait_for(job, {"RUNNING"})
        run(["scontrol", "suspend", job])
        wait_for(job, {"SUSPENDED"})
        _, doc, _ = tracebot("job", job)
        assert doc["data"]["state"] == "SUSPENDED" and doc["stack_groups"] == []
        why = next(s["text"] for s in doc["sections"] if s["title"] == "No hang trace")
        assert "stopped on purpose" in why
    finally:
        run(["scancel", job], check=False)


def test_torchrun_ranks_are_named_by_rank_variable_without_launcher_or_loader_workers(slurm_cluster: None,
                                                                                    tmp_path) -> None:
    torchrun = str(Path(PYTHON).parent / "torchrun")
    job = sbatch("-J", "trun", "-o", str(tmp_path / "trun-%j.out"), "--export=ALL,HANG_LOADER_WORKER=1", "--wrap",
                 f"{torchrun} --nproc_per_node=2 --master_addr=127.0.0.1 --master_port=29677 "
                 f"{JOBS / 'hang_train.py'}")
    try:
        log, end = tmp_path / f"trun-{job}.out", time.monotonic() + 90
        while not log.exists() or log.read_text(errors="replace").count("initialised") < 2:
            assert time.monotonic() < end, "torchrun's ranks never initialised"
            time.sleep(0.5)
        time.sleep(1.0)
        _, doc, _ = tracebot("job", job)
        groups = {tuple(g["ranks"]): g for g in doc["stack_groups"]}
        # Two ranks: neither torchrun (a Python process) nor the ranks' loader workers (same RANK) count.
        assert set(groups) == {("0",), ("1",)}
        assert groups[("1",)]["odd_one_out"] and groups[("1",)]["where"]["function"] == "load_next_batch"
        assert groups[("0",)]["where"]["function"] == "all_reduce"
        launchers = {int(p) for p in run(["pgrep", "-f", "torchrun --nproc_per_node=2"]).stdout.split()}
        assert launchers and not launchers & set(doc["data"]["hang"]["pids"].values())
        rank0 = doc["data"]["hang"]["pids"]["0"]
        assert run(["pgrep", "-P", str(rank0)]).stdout.split(), "rank 0's loader worker should exist"
    finally:
        run(["scancel", job], check=False)
