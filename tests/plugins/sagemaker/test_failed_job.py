"""/trace sagemaker on a failed two-node job, against moto's server on loopback.

How the job becomes Failed: moto 5.x creates every training job ``Completed`` and offers no API, no
state-manager transition and no ``/moto-api/`` endpoint to change that. The server therefore runs in
the test process (``moto.server.ThreadedMotoServer``, the WSGI app ``moto_server`` serves, on a free
127.0.0.1 port) and ``MotoAws.set_job_state`` writes TrainingJobStatus, FailureReason and the secondary
status transitions on moto's backend object for the job; every call the plugin makes still goes
boto3 → HTTP → moto (details in conftest.py). Jobs are created with create_training_job; logs are
written through the real CloudWatch Logs API; their error lines are the texts PyTorch and the
SageMaker seed documents print (fixtures in ``logs/``, each naming its source on its first line).
"""

from __future__ import annotations

import time

from tracebot.config import REPO_ROOT
from tracebot.plugins.sagemaker.logs import LogLimits
from tracebot.plugins.sagemaker.trace import trace_training_job
from tracebot.service.plugin_host import PluginHost

OOM_REASON = (
    'AlgorithmError: ExecuteUserScriptError:\nExitCode 1\nErrorMessage "torch.OutOfMemoryError: CUDA out of '
    'memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 39.39 GiB of which 1.02 GiB is free."'
)


def _failed_oom_job(moto_aws, fixture_lines) -> str:
    """algo-2 runs out of memory 10 minutes before algo-1's NCCL watchdog gives up on it."""
    job = moto_aws.create_job(moto_aws.job_name("llama-pretrain"))
    moto_aws.set_job_state(job, "Failed", OOM_REASON)
    moto_aws.put_log(job, "algo-1", fixture_lines("algo-1-nccl-watchdog.log"), start_offset_s=600)
    moto_aws.put_log(job, "algo-2", fixture_lines("algo-2-cuda-oom.log"), start_offset_s=0)
    return job


def test_failed_job_shows_status_failure_reason_in_words_and_transition_durations(
    moto_aws, make_ctx, fixture_lines
):
    job = _failed_oom_job(moto_aws, fixture_lines)

    result = trace_training_job(make_ctx(), job)

    assert result.status == "error"
    assert f"`{job}` is Failed" in result.summary
    assert "It failed because the training code in the container failed: `AlgorithmError: " in result.summary
    assert "CUDA out of memory" in result.summary
    transitions = next(t for t in result.tables if t.title == "Secondary status transitions")
    assert [row[0] for row in transitions.rows] == ["Starting", "Downloading", "Training", "Failed"]
    assert [row[2] for row in transitions.rows[:3]] == ["6m 00s", "2m 00s", "1h 05m 00s"]
    config = dict(next(t for t in result.tables if t.title == "Configuration").rows)
    assert config["Instances"] == "ml.p4d.24xlarge × 2"
    assert result.data["job"]["failure_reason"] == OOM_REASON
    full = next(s for s in result.sections if s.title == "FailureReason")
    assert "ExitCode 1\nErrorMessage" in full.text  # the summary flattens it; the section keeps its lines


def test_first_errors_per_host_put_the_host_that_failed_first_on_top(moto_aws, make_ctx, fixture_lines):
    job = _failed_oom_job(moto_aws, fixture_lines)

    result = trace_training_job(make_ctx(), job)

    section = next(s for s in result.sections if s.title.startswith("First errors per host"))
    assert section.text.index("algo-2 (first at") < section.text.index("algo-1 (first at")
    assert "torch.OutOfMemoryError: CUDA out of memory" in section.text
    assert "Watchdog caught collective operation timeout" in section.text
    assert "step 100" not in section.text  # healthy progress lines are not errors
    first = result.data["logs"]["first_errors"]
    assert first["algo-2"][0].endswith("is reserved by PyTorch but unallocated.")
    assert result.data["logs"]["streams"] == 2


def test_oom_on_algo_2_is_the_root_cause_above_the_watchdog_timeouts_on_algo_1(
    moto_aws, make_ctx, fixture_lines, tiny_matcher
):
    job = _failed_oom_job(moto_aws, fixture_lines)

    result = trace_training_job(make_ctx(matcher=tiny_matcher), job)

    ids = [m.entry_id for m in result.matches]
    assert ids == ["tiny-cuda-oom", "tiny-nccl-watchdog"]
    oom, watchdog = result.matches
    assert "algo-2" in oom.hosts and "algo-1" not in oom.hosts
    assert watchdog.hosts == ["algo-1"]
    assert "Most likely cause: CUDA out of memory on algo-2" in result.summary


def test_bundled_knowledge_base_finds_cuda_oom_on_algo_2(moto_aws, make_ctx, fixture_lines, bundled_matcher):
    job = _failed_oom_job(moto_aws, fixture_lines)

    result = trace_training_job(make_ctx(matcher=bundled_matcher), job)

    assert result.matches, result.data["notes"]
    assert result.matches[0].entry_id == "cuda-oom"
    assert "algo-2" in result.matches[0].hosts
    watchdog = [m for m in result.matches if m.entry_id == "nccl-watchdog-timeout"]
    assert watchdog and watchdog[0].hosts == ["algo-1"]


def test_failure_reason_alone_is_matched_when_the_job_left_no_logs(moto_aws, make_ctx, tiny_matcher):
    job = moto_aws.create_job(
        moto_aws.job_name("gpt-smp"), hyperparameters={"mp_parameters": '{"partitions": 2}'}
    )
    moto_aws.set_job_state(
        job,
        "Failed",
        'AlgorithmError: ExecuteUserScriptError:\nExitCode 1\nErrorMessage "FileNotFoundError: [Errno 2] No '
        "such file or directory: '/opt/ml/checkpoints/metadata.json.sagemaker-uploading'\"",
    )
    moto_aws.ensure_log_group()  # other jobs have logged in this account and region, this one never did

    result = trace_training_job(make_ctx(matcher=tiny_matcher), job)

    assert [m.entry_id for m in result.matches] == ["tiny-smp-debugger"]
    assert any("No log streams for this job" in n for n in result.data["notes"])


def test_seed_error_texts_in_logs_are_matched_to_their_entries(
    moto_aws, make_ctx, fixture_lines, bundled_matcher
):
    smp = moto_aws.create_job(
        moto_aws.job_name("smp"), hyperparameters={"mp_parameters": '{"partitions": 2}'}
    )
    moto_aws.set_job_state(smp, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    moto_aws.put_log(smp, "algo-1", fixture_lines("algo-1-smp-debugger.log"))
    ddp = moto_aws.create_job(moto_aws.job_name("ddp"))
    moto_aws.set_job_state(ddp, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    moto_aws.put_log(ddp, "algo-1", fixture_lines("algo-1-smdebug-checkpointing.log"))

    smp_result = trace_training_job(make_ctx(matcher=bundled_matcher), smp)
    ddp_result = trace_training_job(make_ctx(matcher=bundled_matcher), ddp)

    assert smp_result.matches[0].entry_id == "smp-debugger-checkpoint-uploading"
    assert ddp_result.matches[0].entry_id == "smdebug-checkpointing-unsupported"


def test_logs_of_a_job_whose_name_extends_this_one_are_not_mixed_in(moto_aws, make_ctx, fixture_lines):
    job = moto_aws.job_name("bert")
    moto_aws.create_job(job)
    moto_aws.create_job(job + "-2")
    moto_aws.put_log(job, "algo-1", ["[rank0]: step 100 | loss 1.02"])
    moto_aws.put_log(job + "-2", "algo-1", fixture_lines("algo-2-cuda-oom.log"))

    result = trace_training_job(make_ctx(), job)

    assert result.data["logs"]["streams"] == 1
    assert result.data["logs"]["first_errors"] == {"algo-1": []}
    assert not any(s.title.startswith("First errors") for s in result.sections)


def test_a_log_larger_than_the_budget_is_read_head_and_tail_so_the_final_error_is_kept(moto_aws, make_ctx):
    job = moto_aws.create_job(moto_aws.job_name("long-run"))
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    healthy = [f"[rank3]: step {i} | loss {2.5 - i / 10000:.4f} | tokens/s 411870" for i in range(3000)]
    final = "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB."
    moto_aws.put_log(job, "algo-4", [*healthy, final], step_s=0.5)
    limits = LogLimits(page_events=100, max_bytes_per_stream=10_000, tail_events=100)

    result = trace_training_job(make_ctx(), job, limits=limits)

    assert result.data["logs"]["first_errors"]["algo-4"] == [final]
    whole = sum(len(line) for line in [*healthy, final])
    # The head budget (plus the page that crossed it) and one tail page: a quarter of the stream.
    assert result.data["logs"]["bytes_read"] < whole / 4
    assert any("algo-4: log larger than the reading budget" in n for n in result.data["notes"])


def test_the_plugin_host_runs_trace_sagemaker_from_its_builtin_list(
    moto_aws, make_ctx, fixture_lines, tiny_matcher
):
    job = _failed_oom_job(moto_aws, fixture_lines)
    host = PluginHost(entry_points=False)  # the real built-in list, as the bot and the CLI build it

    assert "sagemaker" in host.get_commands(), host.load_errors()
    result = host.run_command("sagemaker", make_ctx(matcher=tiny_matcher, is_admin=True), [job])

    assert result.status == "error" and "is Failed" in result.summary
    assert result.matches[0].entry_id == "tiny-cuda-oom"


def test_a_healthy_two_host_job_gets_no_error_lines_and_no_knowledge_matches(
    moto_aws, make_ctx, bundled_matcher
):
    """The clean-corpus SageMaker log (tests/clean/), split back into one CloudWatch stream per host."""
    job = moto_aws.create_job(moto_aws.job_name("healthy"))
    clean = (REPO_ROOT / "tests" / "clean" / "sagemaker_torchrun_2_hosts.log").read_text(encoding="utf-8")
    per_host: dict[str, list[str]] = {}
    for line in clean.splitlines()[1:]:
        host, _, text = line.partition(": ")
        # Host lines only (the file ends with the SDK's own "Training seconds: ..." lines); CloudWatch
        # Logs refuses empty events.
        if host.startswith("algo-") and text.strip():
            per_host.setdefault(host, []).append(text)
    for host, lines in per_host.items():
        moto_aws.put_log(job, host, lines)

    result = trace_training_job(make_ctx(matcher=bundled_matcher), job)

    assert result.status == "ok"
    assert result.data["logs"]["streams"] == len(per_host) == 2
    assert result.data["logs"]["first_errors"] == {host: [] for host in per_host}
    assert result.matches == []


def test_log_reading_stops_at_the_deadline_and_says_so(moto_aws, make_ctx, fixture_lines):
    job = _failed_oom_job(moto_aws, fixture_lines)
    ctx = make_ctx()
    ctx.deadline = time.monotonic() + LogLimits().min_seconds_left - 0.5  # too little left to read logs

    result = trace_training_job(ctx, job)

    assert "is Failed" in result.summary  # what SageMaker said is still reported
    assert result.data["logs"]["bytes_read"] == 0
    assert any("Stopped reading logs at the deadline" in n for n in result.data["notes"])


def test_mpirun_lines_in_the_algo_1_stream_are_attributed_to_the_host_in_their_tag(
    moto_aws, make_ctx, fixture_lines, tiny_matcher
):
    job = moto_aws.create_job(moto_aws.job_name("smp"), hyperparameters={"sagemaker_mpi_enabled": "true"})
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    moto_aws.put_log(job, "algo-1", fixture_lines("algo-1-mpirun-all-hosts.log"))
    moto_aws.put_log(
        job, "algo-2", ["2024-05-02 10:01:12,311 sagemaker-training-toolkit INFO     MPI worker ready"]
    )

    result = trace_training_job(make_ctx(matcher=tiny_matcher), job)

    first = result.data["logs"]["first_errors"]
    assert len(first["algo-2"]) == 1
    assert first["algo-2"][0].startswith("[1,mpirank:9,algo-2]<stderr>:torch.OutOfMemoryError")
    assert len(first["algo-1"]) == 1 and "Watchdog caught" in first["algo-1"][0]
    oom = next(m for m in result.matches if m.entry_id == "tiny-cuda-oom")
    assert oom.hosts == ["algo-2"]
