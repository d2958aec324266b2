"""GPUs per SageMaker training instance type, for the processes_per_host check.

Sources: the Amazon EC2 accelerated-computing instance specifications
(https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html) and the GPU table of the AWS Batch
user guide (https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html); seed 000 ("Stalling or
Crashing Distributed Training Jobs") itself states 8 for ml.p3.16xlarge, ml.p3dn.24xlarge and
ml.p4d.24xlarge. A SageMaker ``ml.X`` type has the GPUs of the EC2 type ``X``. Types not listed here
are unknown rather than guessed: the check stays silent for them.
"""

from __future__ import annotations

GPUS_PER_INSTANCE: dict[str, int] = {
    # P2: NVIDIA K80
    "ml.p2.xlarge": 1,
    "ml.p2.8xlarge": 8,
    "ml.p2.16xlarge": 16,
    # P3 / P3dn: NVIDIA V100
    "ml.p3.2xlarge": 1,
    "ml.p3.8xlarge": 4,
    "ml.p3.16xlarge": 8,
    "ml.p3dn.24xlarge": 8,
    # P4d / P4de: NVIDIA A100
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    # P5 family: NVIDIA H100 / H200
    "ml.p5.48xlarge": 8,
    "ml.p5e.48xlarge": 8,
    "ml.p5en.48xlarge": 8,
    # G4dn: NVIDIA T4
    "ml.g4dn.xlarge": 1,
    "ml.g4dn.2xlarge": 1,
    "ml.g4dn.4xlarge": 1,
    "ml.g4dn.8xlarge": 1,
    "ml.g4dn.16xlarge": 1,
    "ml.g4dn.12xlarge": 4,
    # G5: NVIDIA A10G
    "ml.g5.xlarge": 1,
    "ml.g5.2xlarge": 1,
    "ml.g5.4xlarge": 1,
    "ml.g5.8xlarge": 1,
    "ml.g5.16xlarge": 1,
    "ml.g5.12xlarge": 4,
    "ml.g5.24xlarge": 4,
    "ml.g5.48xlarge": 8,
    # G6: NVIDIA L4
    "ml.g6.xlarge": 1,
    "ml.g6.2xlarge": 1,
    "ml.g6.4xlarge": 1,
    "ml.g6.8xlarge": 1,
    "ml.g6.16xlarge": 1,
    "ml.g6.12xlarge": 4,
    "ml.g6.24xlarge": 4,
    "ml.g6.48xlarge": 8,
    # G6e: NVIDIA L40S
    "ml.g6e.xlarge": 1,
    "ml.g6e.2xlarge": 1,
    "ml.g6e.4xlarge": 1,
    "ml.g6e.8xlarge": 1,
    "ml.g6e.16xlarge": 1,
    "ml.g6e.12xlarge": 4,
    "ml.g6e.24xlarge": 4,
    "ml.g6e.48xlarge": 8,
}


def gpus_of(instance_type: str) -> int | None:
    """GPUs of one instance of ``instance_type`` (``ml.`` prefix optional), or None when unknown."""
    key = instance_type.strip().lower()
    if not key.startswith("ml."):
        key = "ml." + key
    return GPUS_PER_INSTANCE.get(key)
