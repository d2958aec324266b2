"""Configuration warnings the SageMaker troubleshooting seeds explain, for jobs created in moto through
create_training_job with the hyperparameters the SageMaker Python SDK writes for each distribution."""

from __future__ import annotations

from tracebot.plugins.sagemaker.trace import trace_training_job

MODEL_PARALLEL = {
    "mp_parameters": '{"partitions": 2, "microbatches": 4, "ddp": true}',
    "sagemaker_mpi_enabled": "true",
    "sagemaker_mpi_num_of_processes_per_host": "8",
}
DATA_PARALLEL = {
    "sagemaker_distributed_dataparallel_enabled": "true",
    "sagemaker_instance_type": '"ml.p4d.24xlarge"',
}


def _warning_ids(result) -> list[str]:
    return [w["entry_id"] for w in result.data["warnings"]]


def test_debugger_on_in_a_model_parallel_job_warns_with_the_seed_000_fix(moto_aws, make_ctx):
    job = moto_aws.create_job(moto_aws.job_name("smp"), hyperparameters=MODEL_PARALLEL, debugger=True)

    result = trace_training_job(make_ctx(), job)

    assert _warning_ids(result) == ["smp-debugger-checkpoint-uploading"]
    section = next(s for s in result.sections if s.title == "Configuration warnings")
    assert "debugger_hook_config=False" in section.text
    assert "000_2f07280e1d145d25.txt" in section.text
    assert result.status == "warning"  # moto's job is Completed; the warning still raises the status


def test_model_parallel_with_debugger_off_gets_no_debugger_warning(moto_aws, make_ctx):
    job = moto_aws.create_job(moto_aws.job_name("smp"), hyperparameters=MODEL_PARALLEL, debugger=False)

    result = trace_training_job(make_ctx(), job)

    assert _warning_ids(result) == []
    assert result.status == "ok"
    dist = dict(next(t for t in result.tables if t.title == "Distribution hyperparameters").rows)
    assert dist["sagemaker_mpi_num_of_processes_per_host"] == "8"


def test_debugger_with_data_parallel_and_checkpoints_warns_smdebug_unsupported(moto_aws, make_ctx):
    job = moto_aws.create_job(
        moto_aws.job_name("ddp"),
        hyperparameters=DATA_PARALLEL,
        debugger=True,
        checkpoint_s3_uri="s3://team-bucket/ddp/ckpt",
    )

    result = trace_training_job(make_ctx(), job)

    assert _warning_ids(result) == ["smdebug-checkpointing-unsupported"]
    assert result.data["warnings"][0]["doc"] == "001_c3e40f8e1ba1b07f.txt"


def test_debugger_with_data_parallel_but_no_checkpoints_is_fine(moto_aws, make_ctx):
    job = moto_aws.create_job(moto_aws.job_name("ddp"), hyperparameters=DATA_PARALLEL, debugger=True)

    assert _warning_ids(trace_training_job(make_ctx(), job)) == []


def test_multinode_job_using_4_of_8_gpus_per_host_warns_about_network_timeouts(moto_aws, make_ctx):
    params = dict(MODEL_PARALLEL, sagemaker_mpi_num_of_processes_per_host="4")
    job = moto_aws.create_job(moto_aws.job_name("smp"), "ml.p4d.24xlarge", 4, hyperparameters=params)

    result = trace_training_job(make_ctx(), job)

    assert _warning_ids(result) == ["smp-network-timeout-processes-per-host"]
    message = result.data["warnings"][0]["message"]
    assert "processes_per_host is 4 but ml.p4d.24xlarge has 8 GPUs" in message
    assert "processes_per_host=8" in message


def test_processes_per_host_below_gpus_on_a_single_node_is_not_flagged(moto_aws, make_ctx):
    params = dict(MODEL_PARALLEL, sagemaker_mpi_num_of_processes_per_host="4")
    job = moto_aws.create_job(moto_aws.job_name("smp"), "ml.p3.16xlarge", 1, hyperparameters=params)

    assert _warning_ids(trace_training_job(make_ctx(), job)) == []


def test_checkpoint_uri_shared_with_an_in_progress_job_names_that_job(moto_aws, make_ctx):
    uri = "s3://team-bucket/llama/checkpoints"
    job = moto_aws.create_job(moto_aws.job_name("llama"), checkpoint_s3_uri=uri)
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    running = moto_aws.create_job(moto_aws.job_name("llama-retry"), checkpoint_s3_uri=uri + "/")
    moto_aws.set_job_state(running, "InProgress")
    finished = moto_aws.create_job(
        moto_aws.job_name("llama-old"), checkpoint_s3_uri=uri
    )  # Completed: harmless
    unrelated = moto_aws.create_job(moto_aws.job_name("bert"), checkpoint_s3_uri="s3://team-bucket/bert/ckpt")
    moto_aws.set_job_state(unrelated, "InProgress")

    result = trace_training_job(make_ctx(settings={"allow": {"U1": ["llama-*"]}}), job)  # the asker's grant

    assert _warning_ids(result) == ["sagemaker-checkpoint-s3-uri-reuse"]
    message = result.data["warnings"][0]["message"]
    assert f"`{running}`" in message
    assert finished not in message and unrelated not in message
    config = dict(next(t for t in result.tables if t.title == "Configuration").rows)
    assert config["Checkpoint S3 URI"] == uri
    assert config["Checkpoint local path"] == "/opt/ml/checkpoints"


def test_empty_mp_parameters_from_hf_training_arguments_is_not_model_parallel(moto_aws, make_ctx):
    """transformers' TrainingArguments carries ``mp_parameters: ""``; the SDK json-encodes it to ``'""'``."""
    job = moto_aws.create_job(moto_aws.job_name("hf"), hyperparameters={"mp_parameters": '""'}, debugger=True)

    result = trace_training_job(make_ctx(), job)

    assert _warning_ids(result) == []
    assert result.data["job"]["model_parallel"] is False


def test_a_shared_checkpoint_names_only_the_jobs_the_asker_may_trace(moto_aws, make_ctx):
    # a grant of "team-a-*" must not reveal another team's job names (a refusal is worded the same whether
    # a job exists or not); that someone else writes there is still said
    uri = "s3://shared-bucket/ckpt"
    job = moto_aws.create_job(moto_aws.job_name("team-a-llama"), checkpoint_s3_uri=uri)
    ours = moto_aws.create_job(moto_aws.job_name("team-a-retry"), checkpoint_s3_uri=uri)
    theirs = moto_aws.create_job(moto_aws.job_name("team-b-secret-merger"), checkpoint_s3_uri=uri)
    for running in (ours, theirs):
        moto_aws.set_job_state(running, "InProgress")

    result = trace_training_job(make_ctx(settings={"allow": {"U1": ["team-a-*"]}}), job)

    message = result.data["warnings"][0]["message"]
    assert f"`{ours}`" in message and "1 other job you may not trace" in message
    assert theirs not in str(result.to_dict())
    admin = trace_training_job(make_ctx(is_admin=True), job)
    assert f"`{theirs}`" in admin.data["warnings"][0]["message"]
