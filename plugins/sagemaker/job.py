"""What a describe_training_job response says, as plain facts the checks and the renderer share.

The SageMaker Python SDK passes distribution settings to the job as hyperparameters, each value a JSON
encoded string: ``sagemaker_mpi_enabled: "true"``, ``sagemaker_mpi_num_of_processes_per_host: "8"``,
``mp_parameters: "{\\"partitions\\": 2}"`` (model parallel), ``sagemaker_distributed_dataparallel_enabled:
"true"`` (data parallel). A job created without the SDK may use plain strings; both are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# Hyperparameter keys shown in the "Distribution" table: the ones the SDK and the training toolkit use.
DISTRIBUTION_KEY_PREFIXES = (
    "sagemaker_mpi_",
    "sagemaker_distributed_dataparallel",
    "sagemaker_torch_distributed",
    "sagemaker_pytorch_ddp",
    "sagemaker_parameter_server",
    "sagemaker_instance_type",
    "mp_parameters",
    "smdistributed",
)
DATA_PARALLEL_KEY = "sagemaker_distributed_dataparallel_enabled"
PROCESSES_PER_HOST_KEY = "sagemaker_mpi_num_of_processes_per_host"
MODEL_PARALLEL_KEY = "mp_parameters"


def decode_hyperparameter(raw: str) -> Any:
    """A hyperparameter value as the training toolkit would see it (JSON when it parses, else text)."""
    value: Any = raw
    for _ in range(2):  # the SDK json-encodes, and mp_parameters is a JSON object inside that string
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value)
        except ValueError:
            break
    return value


def is_true(raw: str | None) -> bool:
    if raw is None:
        return False
    value = decode_hyperparameter(raw)
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return value is True or value == 1


@dataclass
class InstanceGroup:
    instance_type: str
    count: int
    name: str = ""


@dataclass
class JobFacts:
    name: str
    status: str
    secondary_status: str
    failure_reason: str
    arn: str
    instances: list[InstanceGroup]
    hyperparameters: dict[str, str]
    checkpoint_s3_uri: str
    checkpoint_local_path: str
    debugger_hook: bool  # DebugHookConfig present: the Debugger hook runs in the training container
    debugger_rules: list[str]
    transitions: list[dict[str, Any]] = field(default_factory=list)
    creation_time: datetime | None = None
    training_start: datetime | None = None
    training_end: datetime | None = None

    @property
    def total_instances(self) -> int:
        return sum(g.count for g in self.instances)

    @property
    def model_parallel(self) -> bool:
        raw = self.hyperparameters.get(MODEL_PARALLEL_KEY)
        return raw is not None and decode_hyperparameter(raw) not in ("", {}, None)

    @property
    def data_parallel(self) -> bool:
        return is_true(self.hyperparameters.get(DATA_PARALLEL_KEY))

    @property
    def processes_per_host(self) -> int | None:
        raw = self.hyperparameters.get(PROCESSES_PER_HOST_KEY)
        if raw is None:
            return None
        value = decode_hyperparameter(raw)
        try:
            return int(value)
        except (TypeError, ValueError):
            return None

    def distribution_settings(self) -> dict[str, str]:
        return {
            k: v for k, v in sorted(self.hyperparameters.items()) if k.startswith(DISTRIBUTION_KEY_PREFIXES)
        }


def facts_from_description(desc: dict[str, Any]) -> JobFacts:
    resources = desc.get("ResourceConfig") or {}
    if resources.get("InstanceGroups"):
        instances = [
            InstanceGroup(
                str(g.get("InstanceType", "?")),
                int(g.get("InstanceCount", 0)),
                str(g.get("InstanceGroupName", "")),
            )
            for g in resources["InstanceGroups"]
        ]
    else:
        instances = [
            InstanceGroup(str(resources.get("InstanceType", "?")), int(resources.get("InstanceCount", 0)))
        ]
    checkpoint = desc.get("CheckpointConfig") or {}
    return JobFacts(
        name=str(desc.get("TrainingJobName", "")),
        status=str(desc.get("TrainingJobStatus", "Unknown")),
        secondary_status=str(desc.get("SecondaryStatus", "")),
        failure_reason=str(desc.get("FailureReason", "") or ""),
        arn=str(desc.get("TrainingJobArn", "")),
        instances=instances,
        hyperparameters={str(k): str(v) for k, v in (desc.get("HyperParameters") or {}).items()},
        checkpoint_s3_uri=str(checkpoint.get("S3Uri", "") or ""),
        checkpoint_local_path=str(checkpoint.get("LocalPath", "") or ""),
        debugger_hook=bool(desc.get("DebugHookConfig")),
        debugger_rules=[
            str(r.get("RuleConfigurationName", "?")) for r in desc.get("DebugRuleConfigurations") or []
        ],
        transitions=list(desc.get("SecondaryStatusTransitions") or []),
        creation_time=desc.get("CreationTime"),
        training_start=desc.get("TrainingStartTime"),
        training_end=desc.get("TrainingEndTime"),
    )


def normalise_s3_uri(uri: str) -> str:
    """Two checkpoint URIs name the same place when they differ only by case of scheme or a final slash."""
    uri = uri.strip()
    if uri[:5].lower() == "s3://":
        uri = "s3://" + uri[5:]
    return uri.rstrip("/")
