"""Configuration warnings for a training job, each one explained by a section of the seed documents.

Every warning names the knowledge entry that explains it (``entry_id``) and the seed section it comes
from, so the reply can point at the fix. The checks read only the job description, except the shared
checkpoint URI check, which lists the InProgress jobs of the account (bounded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracebot.plugin_api import code_span
from tracebot.plugins.sagemaker.gpus import gpus_of
from tracebot.plugins.sagemaker.job import JobFacts, facts_from_description, normalise_s3_uri

SEED_MODEL_PARALLEL = "000_2f07280e1d145d25.txt"
SEED_DATA_PARALLEL = "001_c3e40f8e1ba1b07f.txt"

MAX_INPROGRESS_DESCRIBED = 50  # describe_training_job calls spent on the shared-checkpoint check


@dataclass
class ConfigWarning:
    entry_id: str
    message: str
    doc: str
    section: str

    def to_dict(self) -> dict[str, str]:
        return {"entry_id": self.entry_id, "message": self.message, "doc": self.doc, "section": self.section}


def static_warnings(facts: JobFacts) -> list[ConfigWarning]:
    """The checks that need nothing but the job's own description."""
    found: list[ConfigWarning] = []
    if facts.debugger_hook and facts.model_parallel:
        found.append(
            ConfigWarning(
                "smp-debugger-checkpoint-uploading",
                "SageMaker Debugger is on (DebugHookConfig is set) in a model-parallel job (`mp_parameters`). "
                "Debugger is not available with distributed model parallel and can fail with "
                "`FileNotFoundError ... metadata.json.sagemaker-uploading`: create the estimator with "
                "`debugger_hook_config=False`.",
                SEED_MODEL_PARALLEL,
                "Considerations for Using SageMaker Debugger with SageMaker Distributed Model Parallel",
            )
        )
    if facts.debugger_hook and facts.data_parallel and facts.checkpoint_s3_uri:
        found.append(
            ConfigWarning(
                "smdebug-checkpointing-unsupported",
                "Debugger, distributed data parallel and SageMaker checkpoints (`checkpoint_s3_uri`) are all on; "
                "SMDebug does not support that combination. Pass `debugger_hook_config=False`, or keep "
                "Debugger and checkpoint from the training script instead of `checkpoint_s3_uri`.",
                SEED_DATA_PARALLEL,
                "Using SageMaker Distributed Data Parallel with SageMaker Debugger and Checkpoints",
            )
        )
    found.extend(_processes_per_host_warnings(facts))
    return found


def _processes_per_host_warnings(facts: JobFacts) -> list[ConfigWarning]:
    per_host = facts.processes_per_host
    if per_host is None or facts.total_instances < 2:  # the seed describes multinode jobs only
        return []
    found = []
    for group in facts.instances:
        gpus = gpus_of(group.instance_type)
        if gpus is not None and per_host < gpus:
            found.append(
                ConfigWarning(
                    "smp-network-timeout-processes-per-host",
                    f"processes_per_host is {per_host} but {group.instance_type} has {gpus} GPUs, in a "
                    f"{facts.total_instances}-node job: multinode jobs that leave GPUs unused can crash with "
                    f"a network timeout. Set `processes_per_host={gpus}`.",
                    SEED_MODEL_PARALLEL,
                    "Stalling or Crashing Distributed Training Jobs",
                )
            )
    return found


@dataclass
class SharedCheckpoint:
    jobs: list[str]  # other InProgress jobs writing to the same checkpoint_s3_uri
    examined: int
    complete: bool  # False when the bound or the deadline stopped the search early


def find_shared_checkpoint(
    sagemaker: Any,
    facts: JobFacts,
    remaining: Callable[[], float],
    limit: int = MAX_INPROGRESS_DESCRIBED,
) -> SharedCheckpoint:
    """Other InProgress jobs whose CheckpointConfig.S3Uri is this job's (list + describe, bounded)."""
    if not facts.checkpoint_s3_uri:
        return SharedCheckpoint([], 0, True)
    mine = normalise_s3_uri(facts.checkpoint_s3_uri)
    sharing: list[str] = []
    examined = 0
    kwargs: dict[str, Any] = {"StatusEquals": "InProgress", "MaxResults": 100}
    while True:
        page = sagemaker.list_training_jobs(**kwargs)
        for summary in page.get("TrainingJobSummaries", []):
            name = summary.get("TrainingJobName", "")
            if name == facts.name:
                continue
            if examined >= limit or remaining() < 5.0:
                return SharedCheckpoint(sharing, examined, False)
            other = facts_from_description(sagemaker.describe_training_job(TrainingJobName=name))
            examined += 1
            if other.checkpoint_s3_uri and normalise_s3_uri(other.checkpoint_s3_uri) == mine:
                sharing.append(name)
        token = page.get("NextToken")
        if not token:
            return SharedCheckpoint(sharing, examined, True)
        kwargs["NextToken"] = token


def shared_checkpoint_warning(
    facts: JobFacts, shared: SharedCheckpoint, may_see: Callable[[str], bool] = lambda _name: True
) -> ConfigWarning | None:
    """The warning for a checkpoint URI other InProgress jobs write to. It names only the jobs ``may_see``
    allows (the asker's grants): another team's job names are theirs, and the rest are counted."""
    if not shared.jobs:
        return None
    named = [j for j in shared.jobs if may_see(j)]
    hidden = len(shared.jobs) - len(named)
    parts = [f"`{j}`" for j in named[:5]] + (["…"] if len(named) > 5 else [])
    if hidden:
        parts.append(f"{hidden} other job{'s' if hidden > 1 else ''} you may not trace")
    others = ", ".join(parts)
    return ConfigWarning(
        "sagemaker-checkpoint-s3-uri-reuse",
        f"checkpoint_s3_uri {code_span(facts.checkpoint_s3_uri)} is also used by InProgress job(s) {others}. Jobs "
        "sharing a checkpoint path upload and download each other's checkpoints, which can make the data "
        "download stage very slow: give every job its own `checkpoint_s3_uri`.",
        SEED_MODEL_PARALLEL,
        "Stalling or Crashing Distributed Training Jobs",
    )
