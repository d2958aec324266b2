"""Turn what was learned about a training job into the one :class:`tracebot.result.Result` renderers consume."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tracebot.plugin_api import Diagnosis, Match, Result, Section, Status, Table
from tracebot.plugins.sagemaker.checks import ConfigWarning
from tracebot.plugins.sagemaker.job import JobFacts
from tracebot.plugins.sagemaker.logs import JobLogs

# What the prefix of a FailureReason means, per the DescribeTrainingJob API reference.
_FAILURE_KINDS = {
    "AlgorithmError": "the training code in the container failed",
    "ClientError": "the job's configuration, input data or permissions were rejected",
    "InternalServerError": "SageMaker itself failed (an AWS-side error)",
    "CapacityError": "SageMaker could not get enough instances of the requested type",
    "ResourceLimitExceeded": "an account quota was exceeded",
}


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _fmt_time(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(value, datetime) else ""


def failure_in_words(reason: str) -> str:
    """``AlgorithmError: ...`` -> "the training code in the container failed"; "" for unknown kinds."""
    return _FAILURE_KINDS.get(reason.split(":", 1)[0].strip(), "")


def one_line(text: str, limit: int) -> str:
    """Whitespace (newlines too) collapsed, cut at ``limit`` characters: for summaries and table cells."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def transitions_table(facts: JobFacts, now: datetime | None = None) -> Table:
    now = now or datetime.now(UTC)
    rows = []
    for t in facts.transitions:
        start, end = t.get("StartTime"), t.get("EndTime")
        if isinstance(start, datetime) and isinstance(end, datetime):
            duration = fmt_duration((end - start).total_seconds())
        elif isinstance(start, datetime):
            duration = fmt_duration((now - start).total_seconds()) + " (so far)"
        else:
            duration = ""
        message = one_line(str(t.get("StatusMessage", "")), 120)
        rows.append([str(t.get("Status", "")), _fmt_time(start), duration, message])
    return Table("Secondary status transitions", ["Status", "Started", "Duration", "Message"], rows)


def config_table(facts: JobFacts) -> Table:
    rows = [
        ["Instances", ", ".join(f"{g.instance_type} × {g.count}" for g in facts.instances)],
        ["Checkpoint S3 URI", facts.checkpoint_s3_uri or "(none)"],
        [
            "Checkpoint local path",
            facts.checkpoint_local_path or ("/opt/ml/checkpoints" if facts.checkpoint_s3_uri else "(none)"),
        ],
        ["Debugger hook", "on (DebugHookConfig set)" if facts.debugger_hook else "off"],
    ]
    if facts.debugger_rules:
        rows.append(["Debugger rules", ", ".join(facts.debugger_rules)])
    rows.append(["Model parallel", "yes (mp_parameters)" if facts.model_parallel else "no"])
    rows.append(["Data parallel (smdistributed)", "yes" if facts.data_parallel else "no"])
    if facts.processes_per_host is not None:
        rows.append(["processes_per_host", str(facts.processes_per_host)])
    return Table("Configuration", ["Setting", "Value"], rows)


def distribution_table(facts: JobFacts) -> Table | None:
    settings = facts.distribution_settings()
    if not settings:
        return None
    return Table(
        "Distribution hyperparameters", ["Hyperparameter", "Value"], [[k, v] for k, v in settings.items()]
    )


def failure_reason_section(facts: JobFacts) -> Section | None:
    """The whole FailureReason when the summary's one line had to shorten or flatten it."""
    reason = facts.failure_reason.strip()
    if not reason or one_line(reason, 300) == reason:
        return None
    return Section("FailureReason", f"```\n{reason[:3000]}\n```")


def warnings_section(warnings: list[ConfigWarning]) -> Section | None:
    if not warnings:
        return None
    text = "\n".join(f"• {w.message} (`{w.entry_id}`; {w.doc} § {w.section})" for w in warnings)
    return Section("Configuration warnings", text)


def first_errors_section(first: dict[str, list[tuple[int, str]]]) -> Section | None:
    with_errors = sorted(((h, e) for h, e in first.items() if e), key=lambda he: he[1][0][0])
    if not with_errors:
        return None
    blocks = []
    for host, errors in with_errors:
        when = datetime.fromtimestamp(errors[0][0] / 1000, UTC).strftime("%H:%M:%S")
        lines = "\n".join(line[:500] for _, line in errors)
        blocks.append(f"{host} (first at {when} UTC)\n```\n{lines}\n```")
    quiet = [h for h, e in first.items() if not e]
    if quiet:
        blocks.append("No error lines on: " + ", ".join(quiet))
    return Section("First errors per host (earliest host first)", "\n".join(blocks))


def job_status(facts: JobFacts, warnings: list[ConfigWarning]) -> Status:
    if facts.status == "Failed":
        return "error"
    if facts.status == "Stopped" or warnings:
        return "warning"
    return "ok" if facts.status == "Completed" else "info"


def summary_text(facts: JobFacts, matches: list[Match], warnings: list[ConfigWarning]) -> str:
    parts = [f"Training job `{facts.name}` is {facts.status}"]
    if facts.secondary_status and facts.secondary_status != facts.status:
        parts[0] += f" (secondary status: {facts.secondary_status})"
    if facts.training_start and facts.training_end:
        parts[0] += (
            f" after {fmt_duration((facts.training_end - facts.training_start).total_seconds())} of training"
        )
    parts[0] += "."
    if facts.failure_reason:
        words = failure_in_words(facts.failure_reason)
        reason = one_line(facts.failure_reason, 300).replace("`", "'")
        parts.append(f"It failed because {words}: `{reason}`" if words else f"FailureReason: `{reason}`")
    confident = [m for m in matches if m.confident]
    if confident:
        best = confident[0]
        where = f" on {', '.join(best.hosts)}" if best.hosts else ""
        parts.append(f"Most likely cause: {best.title}{where} (`{best.entry_id}`).")
    if warnings:
        parts.append(
            f"{len(warnings)} configuration warning(s) the SageMaker troubleshooting guides explain."
        )
    return "\n".join(parts)


def build_result(
    facts: JobFacts,
    region: str,
    warnings: list[ConfigWarning],
    logs: JobLogs | None,
    diagnosis: Diagnosis,
    notes: list[str],
    first_errors_per_host: int = 3,
) -> Result:
    sections = [s for s in (failure_reason_section(facts), warnings_section(warnings)) if s]
    first = logs.first_errors(first_errors_per_host) if logs is not None else {}
    if logs is not None:
        errors = first_errors_section(first)
        if errors:
            sections.append(errors)
        notes = notes + logs.notes
    tables = [transitions_table(facts), config_table(facts)]
    dist = distribution_table(facts)
    if dist:
        tables.append(dist)
    data: dict[str, Any] = {
        "region": region,
        "job": {
            "name": facts.name,
            "arn": facts.arn,
            "status": facts.status,
            "secondary_status": facts.secondary_status,
            "failure_reason": facts.failure_reason,
            "instances": [
                {"type": g.instance_type, "count": g.count, "group": g.name} for g in facts.instances
            ],
            "checkpoint": {"s3_uri": facts.checkpoint_s3_uri, "local_path": facts.checkpoint_local_path},
            "debugger_hook": facts.debugger_hook,
            "model_parallel": facts.model_parallel,
            "data_parallel": facts.data_parallel,
            "processes_per_host": facts.processes_per_host,
            "distribution": facts.distribution_settings(),
        },
        "warnings": [w.to_dict() for w in warnings],
        "notes": notes,  # what could not be read and why; renderers show data["notes"] (Slack: context)
    }
    if logs is not None:
        data["logs"] = {
            "streams": logs.streams_total,
            "bytes_read": logs.bytes_read,
            "first_errors": {host: [line for _, line in errors] for host, errors in first.items()},
        }
    return Result(
        title=f"SageMaker training job {facts.name}",
        summary=summary_text(facts, diagnosis.matches, warnings),
        status=job_status(facts, warnings),
        sections=sections,
        tables=tables,
        diagnosis=diagnosis,
        data=data,
    )


def problem_result(job_name: str, message: str, code: str) -> Result:
    """What the user sees when AWS could not answer (no such job, access denied, throttled, ...)."""
    return Result(
        title=f"SageMaker training job {job_name}",
        summary=message,
        status="error",
        data={"error": {"code": code, "message": message}},
    )
