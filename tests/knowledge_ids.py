"""The knowledge-entry ids the test suites and the corpus scripts check labels against.

The ids come from knowledge/ itself: one YAML file per entry, file name = id (the loader refuses an
entry whose id differs), so adding, renaming or deleting an entry needs no edit here. Only the two
subsets below are history that the files do not record, so they are written down, here and only here.
"""

from __future__ import annotations

from pathlib import Path

from tracebot.knowledge.loader import entry_files

KNOWLEDGE = Path(__file__).resolve().parent.parent / "knowledge"
# Every entry of the bundled knowledge base, from the very files the loader reads.
ENTRY_IDS = frozenset(path.stem for path in entry_files(KNOWLEDGE))

# The entries the five seed documents ask for (knowledge commits "seed-000" to "seed-004"). Losing one
# is a regression however the rest of knowledge/ changes, so this list cannot come from knowledge/.
# (`sources: doc:` does not tell them apart: a later entry, py-spy-permission-denied, cites a seed too.)
SEED_IDS = frozenset(
    {
        "smp-debugger-checkpoint-uploading",
        "sagemaker-checkpoint-internal-error",
        "smp-tf-input-order-convergence",
        "efa-security-group-init-stall",
        "smp-checkpoint-stall-state-dict",
        "cuda-oom",
        "gpu-ecc-error",
        "smp-network-timeout-processes-per-host",
        "sagemaker-checkpoint-s3-uri-reuse",
        "fsx-lustre-large-data",
        "nccl-system-error-gpu-memory",
        "smdebug-checkpointing-unsupported",
        "state-dict-unexpected-prefix",
        "uneven-batches-stall-at-end",
        "trcomp-convergence-single-gpu",
        "trcomp-convergence-distributed",
        "xla-missing-gpu-num-devices",
        "trcomp-no-speedup",
        "slurm-job-stopped-triage",
        "slurm-log-error-search",
        "nccl-watchdog-timeout",
        "master-port-in-use",
        "gpu-zombie-process",
        "distributed-hang-py-spy",
        "nccl-network-hang",
        "isolate-bad-gpus",
        "python-trace-unresponsive",
        "amd-iommu-hang",
    }
)

# tests/corpus/ was built for the seed entries and the ones written from public issues before it (the
# NCCL, CUDA, PyTorch/host and SLURM extras); each must stay the expected answer of at least two of
# its cases. Entries added since are known labels there (ENTRY_IDS) but need no cases.
CORPUS_IDS = SEED_IDS | frozenset(
    {
        "cuda-illegal-memory-access",
        "cuda-device-side-assert",
        "nccl-invalid-usage-duplicate-gpu",
        "host-oom-killed",
        "ddp-unused-parameters",
        "gpu-fallen-off-bus",
        "dataloader-shm-bus-error",
        "nccl-remote-error",
        "torchrun-child-failed",
        "rendezvous-timeout",
        "cuda-driver-version-insufficient",
        "cuda-no-kernel-image",
        "slurm-time-limit",
        "slurm-node-fail",
        "deepspeed-loss-scale-minimum",
        "process-group-not-initialized",
        "nccl-unhandled-cuda-error",
    }
)
