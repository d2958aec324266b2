"""Bad input and AWS failures get clear answers, within bounded retries, without leaking credentials.

Unknown jobs come from moto. Throttling and AccessDenied cannot be produced by moto's SageMaker or
CloudWatch Logs backends, so those tests use ``aws_error_endpoint`` (conftest.py): a loopback HTTP
server that answers every call with the error document AWS's JSON protocol returns (HTTP 400,
``{"__type": "ThrottlingException", "message": ...}``). It is a fake AWS endpoint, acceptable only
because moto has no way to return these errors; botocore parses and retries its answers for real.
"""

from __future__ import annotations

import json

import pytest

from tracebot.plugin_api import UsageError
from tracebot.plugins.sagemaker import parse
from tracebot.plugins.sagemaker.aws import MAX_ATTEMPTS
from tracebot.plugins.sagemaker.trace import trace_training_job
from tracebot.service.plugin_host import PluginHost

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DENIED = (
    "User: arn:aws:sts::123456789012:assumed-role/tracebot/i-0abc is not authorized to perform: "
    "sagemaker:DescribeTrainingJob on resource: arn:aws:sagemaker:us-east-1:123456789012:training-job/x"
)


@pytest.mark.parametrize(
    "name",
    [
        "job; rm -rf /",
        "job$(id)",
        "job`id`",
        "../etc/passwd",
        "job\n",
        "-leading-hyphen",
        "a" * 64,
        "job name",
        "",
    ],
)
def test_job_name_with_shell_or_path_characters_is_refused_before_any_aws_call(
    name, aws_env, aws_error_endpoint, make_ctx
):
    endpoint = aws_error_endpoint(400, "AccessDeniedException", DENIED)
    aws_env(endpoint.url)
    host = PluginHost(builtins=("tracebot.plugins.sagemaker",), entry_points=False)

    result = host.run_command("sagemaker", make_ctx(), [name])

    assert result.status == "error"
    assert "is not a SageMaker training job name" in result.summary
    assert endpoint.requests == []


def test_valid_job_names_pass_validation():
    assert parse(["llama-70b-pretrain-2024-05-02-10-01-12-442"]) == {
        "job_name": "llama-70b-pretrain-2024-05-02-10-01-12-442"
    }
    assert parse(["a" * 63]) == {"job_name": "a" * 63}
    # the host adds the one usage line; the message says what was wrong ("Usage: /trace /trace …" twice before)
    with pytest.raises(UsageError, match="^Give exactly one training job name.$"):
        parse(["two", "words"])
    with pytest.raises(UsageError, match="^Which training job"):
        parse([])


def test_unknown_job_says_no_such_training_job(moto_aws, make_ctx):
    result = trace_training_job(make_ctx(), "never-created-job")

    assert result.status == "error"
    assert result.summary.startswith("No such training job `never-created-job` in us-east-1")
    assert result.data["error"]["code"] == "NoSuchTrainingJob"


def test_throttling_is_retried_a_bounded_number_of_times_then_explained(
    aws_env, aws_error_endpoint, make_ctx
):
    endpoint = aws_error_endpoint(400, "ThrottlingException", "Rate exceeded")
    aws_env(endpoint.url)

    result = trace_training_job(make_ctx(), "llama-pretrain")

    assert result.status == "error"
    assert "AWS is throttling sagemaker:DescribeTrainingJob" in result.summary
    assert "try again in a minute" in result.summary
    assert endpoint.requests == ["SageMaker.DescribeTrainingJob"] * MAX_ATTEMPTS


def test_access_denied_names_the_missing_permission_and_hides_the_aws_principal(
    aws_env, aws_error_endpoint, make_ctx, monkeypatch
):
    endpoint = aws_error_endpoint(400, "AccessDeniedException", DENIED)
    aws_env(endpoint.url)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)

    result = trace_training_job(make_ctx(), "llama-pretrain")

    assert result.status == "error"
    assert "AWS denied sagemaker:DescribeTrainingJob (AccessDeniedException)" in result.summary
    assert len(endpoint.requests) == 1  # not retried: retrying a denial cannot help
    shown = json.dumps(result.to_dict())
    assert SECRET not in shown and "testing" not in shown
    assert "123456789012" not in shown and "assumed-role" not in shown


def test_denied_logs_keep_the_job_facts_and_say_why_logs_are_missing(
    moto_aws, aws_error_endpoint, make_ctx, monkeypatch
):
    job = moto_aws.create_job(moto_aws.job_name("llama"))
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExecuteUserScriptError: ExitCode 1")
    logs_denied = aws_error_endpoint(
        400, "AccessDeniedException", "not authorized to perform: logs:DescribeLogStreams"
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", logs_denied.url)  # botocore's per-service override

    result = trace_training_job(make_ctx(), job)

    assert result.status == "error" and "is Failed" in result.summary
    assert logs_denied.requests == ["Logs_20140328.DescribeLogStreams"]
    assert any("Could not read the job's logs: AWS denied" in n for n in result.data["notes"])


@pytest.mark.parametrize(
    ("unset", "message"),
    [
        (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "No AWS credentials found"),
        (("AWS_REGION", "AWS_DEFAULT_REGION"), "No AWS region is configured"),
    ],
    ids=["no-credentials", "no-region"],
)
def test_missing_credentials_or_region_get_a_clear_message_and_no_call(
    unset, message, aws_env, aws_error_endpoint, make_ctx, monkeypatch
):
    endpoint = aws_error_endpoint(400, "AccessDeniedException", DENIED)
    aws_env(endpoint.url)
    for name in unset:
        monkeypatch.delenv(name)

    result = trace_training_job(make_ctx(), "llama-pretrain")

    assert result.status == "error"
    assert result.summary.startswith(message)
    assert endpoint.requests == []


def test_aws_region_alone_is_enough_although_botocore_reads_only_aws_default_region(
    moto_aws, make_ctx, monkeypatch
):
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    job = moto_aws.create_job(moto_aws.job_name("llama"))

    result = trace_training_job(make_ctx(), job)

    assert result.data["region"] == "us-east-1"
    assert f"`{job}` is Completed" in result.summary


def test_a_profile_missing_from_the_aws_config_is_named(aws_env, aws_error_endpoint, make_ctx, monkeypatch):
    endpoint = aws_error_endpoint(400, "AccessDeniedException", DENIED)
    aws_env(endpoint.url)
    monkeypatch.setenv("AWS_PROFILE", "ml-prod")

    result = trace_training_job(make_ctx(), "llama-pretrain")

    assert result.summary == "The AWS profile 'ml-prod' (AWS_PROFILE) is not in the AWS config files."
    assert endpoint.requests == []
