"""Who may read a training job's CloudWatch error lines through /trace sagemaker: admins, and the Slack
users and groups granted the job's name in TRACEBOT_CONFIG's ``sagemaker.allow`` (moto on loopback)."""

from __future__ import annotations

import pytest

from tracebot.plugin_api import Caller, CommandContext
from tracebot.service.plugin_host import PluginHost

SECRET_LINE = "team-b private: torch.OutOfMemoryError: CUDA out of memory on the new model"
GRANTS = {
    "groups": {"team-a": ["U0ALICE", "U0BOB"]},
    "allow": {"team-a": ["team-a-*"], "U0CAROL": ["carol-sweep-*"]},
}


@pytest.fixture
def sagemaker_host() -> PluginHost:
    return PluginHost(builtins=("tracebot.plugins.sagemaker",), entry_points=False)


def _ctx(user: str | None, *, admin: bool = False, settings: dict | None = None) -> CommandContext:
    return CommandContext(caller=Caller(slack_user=user, is_admin=admin), settings=settings or {})


def _failed_job(moto_aws, name: str) -> str:
    job = moto_aws.create_job(name)
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExitCode 1")
    moto_aws.put_log(job, "algo-1", ["step 1", SECRET_LINE])
    return job


def test_an_unmapped_user_does_not_see_another_teams_error_lines(moto_aws, sagemaker_host):
    job = _failed_job(moto_aws, moto_aws.job_name("team-b-llm"))

    result = sagemaker_host.run_command("sagemaker", _ctx("U0MALLORY", settings=GRANTS), [job])

    assert result.status == "error" and result.data["error"] == "not_allowed"
    assert "You may not trace" in result.summary
    assert "CUDA out of memory" not in str(result.to_dict())


def test_refusal_happens_before_any_aws_call(aws_env, aws_error_endpoint, sagemaker_host):
    endpoint = aws_error_endpoint(400, "ValidationException", "Requested resource not found")
    aws_env(endpoint.url)

    result = sagemaker_host.run_command("sagemaker", _ctx("U0MALLORY"), ["team-b-llm"])

    assert result.data["error"] == "not_allowed"
    assert endpoint.requests == []  # the answer can't even tell whether the job exists


def test_a_group_member_reads_jobs_matching_the_groups_pattern_and_no_others(moto_aws, sagemaker_host):
    own = _failed_job(moto_aws, moto_aws.job_name("team-a-pretrain"))
    other = _failed_job(moto_aws, moto_aws.job_name("team-b-llm"))

    mine = sagemaker_host.run_command("sagemaker", _ctx("U0BOB", settings=GRANTS), [own])
    theirs = sagemaker_host.run_command("sagemaker", _ctx("U0BOB", settings=GRANTS), [other])

    assert "is Failed" in mine.summary
    assert theirs.data["error"] == "not_allowed"


def test_a_user_grant_and_an_admin(moto_aws, sagemaker_host):
    job = _failed_job(moto_aws, moto_aws.job_name("carol-sweep"))
    other = _failed_job(moto_aws, moto_aws.job_name("team-b-llm"))

    assert "is Failed" in sagemaker_host.run_command("sagemaker", _ctx("U0CAROL", settings=GRANTS), [job]).summary
    admin = sagemaker_host.run_command("sagemaker", _ctx("U0ADMIN", admin=True), [other])
    assert "is Failed" in admin.summary


def test_a_terminal_user_who_is_not_an_admin_is_refused(aws_env, aws_error_endpoint, sagemaker_host):
    endpoint = aws_error_endpoint(400, "ValidationException", "Requested resource not found")
    aws_env(endpoint.url)

    result = sagemaker_host.run_command("sagemaker", _ctx(None, settings=GRANTS), ["team-a-pretrain"])

    assert result.data["error"] == "not_allowed" and endpoint.requests == []
