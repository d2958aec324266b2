"""``/trace sagemaker <job>``: describe the job, check its configuration, read its logs, match the errors.

Only the describe call is essential: when a later step (the shared-checkpoint search, the logs) fails,
the reply keeps what is known and says in a note what could not be read and why.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from tracebot.plugin_api import CommandContext, Result
from tracebot.plugins.sagemaker.access import may_read
from tracebot.plugins.sagemaker.aws import AwsProblem, JobNotFound, explain, make_clients
from tracebot.plugins.sagemaker.checks import (
    find_shared_checkpoint,
    shared_checkpoint_warning,
    static_warnings,
)
from tracebot.plugins.sagemaker.diagnose import job_text
from tracebot.plugins.sagemaker.job import facts_from_description
from tracebot.plugins.sagemaker.logs import LOG_GROUP, JobLogs, LogLimits, read_job_logs
from tracebot.plugins.sagemaker.report import build_result, problem_result

_AWS_ERRORS = (ClientError, BotoCoreError)


def trace_training_job(ctx: CommandContext, job_name: str, limits: LogLimits | None = None) -> Result:
    limits = limits or LogLimits()
    try:
        clients = make_clients(ctx.settings)
    except AwsProblem as problem:
        return problem_result(job_name, str(problem), problem.code)
    region = clients.region

    ctx.progress(f"Asking SageMaker about `{job_name}` in {region}…")
    try:
        description = clients.sagemaker.describe_training_job(TrainingJobName=job_name)
    except _AWS_ERRORS as exc:
        problem = explain(exc, "sagemaker:DescribeTrainingJob", region)
        if isinstance(problem, JobNotFound):
            return problem_result(
                job_name,
                f"No such training job `{job_name}` in {region} (for the AWS account tracebot runs as). "
                "Check the name and the region.",
                "NoSuchTrainingJob",
            )
        return problem_result(job_name, str(problem), problem.code)
    facts = facts_from_description(description)
    warnings = static_warnings(facts)
    notes: list[str] = []

    try:
        shared = find_shared_checkpoint(clients.sagemaker, facts, ctx.remaining)
        warning = shared_checkpoint_warning(facts, shared, lambda name: may_read(ctx.caller, ctx.settings, name))
        if warning:
            warnings.append(warning)
        if not shared.complete:
            notes.append(
                f"Checked {shared.examined} InProgress jobs for a shared checkpoint_s3_uri, not all of them."
            )
    except _AWS_ERRORS as exc:
        problem = explain(exc, "sagemaker:ListTrainingJobs", region)
        notes.append(f"Could not look for other jobs sharing the checkpoint URI: {problem}")

    ctx.progress(f"Reading the CloudWatch logs of `{job_name}`…")
    logs: JobLogs | None = None
    try:
        logs = read_job_logs(clients.logs, job_name, ctx.remaining, limits)
        if not logs.hosts:
            notes.append(
                f"No log streams for this job in {LOG_GROUP} (its containers may never have started)."
            )
    except _AWS_ERRORS as exc:
        problem = explain(exc, "logs:GetLogEvents", region)
        if isinstance(problem, JobNotFound):
            notes.append(
                f"The log group {LOG_GROUP} does not exist in {region}: no job there has logged yet."
            )
        else:
            notes.append(f"Could not read the job's logs: {problem}")

    if ctx.has_knowledge:
        ctx.progress("Matching the errors against the knowledge base…")
    else:
        notes.append("The knowledge base is not loaded, so the errors were not matched against it.")
    # ctx.match never raises: a matcher failure becomes a note, and what SageMaker said stays.
    diagnosis = ctx.match(job_text(facts.failure_reason, logs.combined_text() if logs else ""))
    notes += [n for n in diagnosis.notes if ctx.has_knowledge]
    return build_result(facts, region, warnings, logs, diagnosis, notes, limits.first_errors_per_host)
