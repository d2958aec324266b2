"""Built-in plugin: ``/trace sagemaker <training-job-name>``.

Describes a SageMaker training job (status, secondary status transitions, FailureReason, instances,
checkpoint / Debugger / distribution settings), reads its CloudWatch Logs streams, matches the first
errors of every host against the knowledge base and warns about configurations that the SageMaker
troubleshooting guides (seeds 000 and 001) explain.
"""

from __future__ import annotations

import re
from typing import Any

from tracebot.plugin_api import Command, CommandContext, NotAllowed, Result, UsageError, code_span, hookimpl
from tracebot.plugins.sagemaker.access import may_read

USAGE = "/trace sagemaker <training-job-name>"
# SageMaker's own rule for TrainingJobName (CreateTrainingJob API reference); checked before any call.
JOB_NAME_RE = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def parse(args: list[str]) -> dict[str, Any]:
    if len(args) != 1:
        raise UsageError("Give exactly one training job name." if args else "Which training job? Give its name.")
    name = args[0]
    if len(name) > 63 or not JOB_NAME_RE.fullmatch(name):
        shown = name if len(name) <= 80 and name.isprintable() else repr(name[:80]) + "…"
        raise UsageError(
            f"{code_span(shown)} is not a SageMaker training job name: 1-63 letters, digits and hyphens, "
            "starting with a letter or digit."
        )
    return {"job_name": name}


def run(ctx: CommandContext, job_name: str) -> Result:
    # Checked before any AWS call, and worded the same whether the job exists or not.
    if not may_read(ctx.caller, ctx.settings, job_name):
        raise NotAllowed(
            f"You may not trace `{job_name}`: `/trace sagemaker` is for admins and for the users and groups "
            "granted that job's name in the `sagemaker.allow` section of TRACEBOT_CONFIG."
        )
    from tracebot.plugins.sagemaker.trace import trace_training_job  # boto3 is imported only when used

    return trace_training_job(ctx, job_name)


@hookimpl
def register_commands() -> list[Command]:
    return [
        Command(
            name="sagemaker",
            usage=USAGE,
            help="What happened to a SageMaker training job: status, FailureReason, first errors per host "
            "matched against the knowledge base, and configuration warnings.",
            parse=parse,
            run=run,
            timeout_s=120.0,
            dedupe_key=lambda parsed: f"sagemaker:{parsed['job_name']}",
        )
    ]
