"""Each form an emitting project prints for an entry's cause is exact evidence for that entry.

The lines are written from the format strings the entries cite beside their patterns (placeholders filled in
with made-up values), not taken from any report: they prove the patterns follow the source without teaching the
ranking model anything (an example in the knowledge base would be a training text too). The near misses are
the same sources' lines that do not mean the entry's cause.
"""

from __future__ import annotations

import pytest

from tracebot.authoring.lint import check_example

# (entry, a line as the source prints it)
FORMS = [
    # Slurm: slurmstepd relays the kill notice; task/cgroup's messages across releases; srun's per-task notice
    ("host-oom-killed", "slurmstepd: error: Exceeded job memory limit"),
    ("host-oom-killed", "slurmstepd: error: Exceeded step memory limit at some point."),
    ("host-oom-killed", "slurmstepd: error: Job 4410 exceeded 16777216 KB memory limit, being killed"),
    ("host-oom-killed", "slurmstepd: error: StepId=4410.0 exceeded virtual memory limit (9126805504 > 8589934592), being killed"),
    ("host-oom-killed", "[2025-03-01T10:00:00.123] Job 4410 exceeded memory limit (9126805504>8589934592), cancelling it"),
    ("host-oom-killed", "slurmstepd: error: Step 4410.0 hit memory+swap limit at least once during execution. This may or may not result in some failure."),
    ("host-oom-killed", "slurmstepd: error: Detected 2 oom_kill events in StepId=4410.0. Some of the step tasks have been OOM Killed."),
    ("host-oom-killed", "srun: error: gpu-a12: tasks 0-3,5: Out Of Memory"),
    # NVIDIA's driver, DCGM, nvidia-smi, the device plugin; AMD's driver and HIP
    ("gpu-ecc-error", "[Wed Mar  5 01:02:03 2025] NVRM: Xid (PCI:0000:4e:00): 171, pid=2231, name=python3, Uncorrectable DRAM error"),
    ("gpu-ecc-error", "I0305 01:02:03.000000 1 health.go:151] XidCriticalError: Xid=95 on Device=GPU-0a1b2c3d; marking device as unhealthy."),
    ("gpu-ecc-error", "Error: Detected 3 volatile double-bit ECC error(s) in GPU 5."),
    ("gpu-ecc-error", "GPU 2 had uncorrectable memory errors and row remapping failed."),
    ("gpu-ecc-error", "            DRAM Uncorrectable                : 4"),
    ("gpu-ecc-error", "amdgpu 0000:c1:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block"),
    ("gpu-ecc-error", "RuntimeError: HIP error: hipErrorECCNotCorrectable"),
    ("gpu-fallen-off-bus", "I0305 01:02:03.000000 1 health.go:151] XidCriticalError: Xid=79 on Device=GPU-0a1b2c3d; marking device as unhealthy."),
    # NCCL 2.30's wording for two ranks on one GPU
    ("nccl-invalid-usage-duplicate-gpu", "node-3:1200:1301 [1] NCCL WARN Multiple ranks detected using the same GPU on this node. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."),
    ("nccl-invalid-usage-duplicate-gpu", "node-3:1200:1301 [1] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."),
    # front ends that word the entry's cause themselves: JAX/XLA, Lightning, the CUDA JIT, torch.save's writer
    ("cuda-oom", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 3.50GiB on device ordinal 1"),
    ("no-gpu-visible", "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)"),
    ("no-gpu-visible", "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. Platforms present are: cpu"),
    ("no-gpu-visible", "lightning.fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your system since the accelerator is not available. The following accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu']."),
    ("cuda-driver-version-insufficient", "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain."),
    ("disk-full-on-save", "RuntimeError: [enforce fail at inline_container.cc:626] . PytorchStreamWriter failed writing central directory: file write failed"),
    # HDF5's sec2 driver as h5py raises it (a Keras .h5 checkpoint); ctime's newline ends the first line
    ("disk-full-on-save", "OSError: Can't write data (file write failed: time = Tue Jun  3 10:00:00 2025\n, filename = 'ckpt/weights.05.h5', "
                          "file descriptor = 7, errno = 28, error message = 'No space left on device', buf = 0x55d0c1a2b000, total write "
                          "size = 1048576, bytes this sub-write = 1048576, bytes actually written = 18446744073709551615, offset = 4096)"),
    # TensorFlow's IOError status for ENOSPC / EDQUOT: in Python, and as the C++ log's OP_REQUIRES line
    ("disk-full-on-save", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: /ckpt/run1/model.ckpt-2000_temp/"
                          "part-00000-of-00001.data-00000-of-00001.tempstate8123; No space left on device [Op:SaveV2]"),
    ("disk-full-on-save", "2025-06-03 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1828] OP_REQUIRES failed at "
                          "save_restore_v2_ops.cc:160 : RESOURCE_EXHAUSTED: /ckpt/run1/ckpt-7_temp/part-00000-of-00001.data-00000-of-00001; "
                          "Disk quota exceeded"),
    # other front ends for the host's memory and the time limit: Ray's memory monitor, docker compose, submitit
    ("host-oom-killed", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."),
    ("host-oom-killed", "trainer-1 exited with code 137"),
    ("slurm-time-limit", "submitit INFO (2025-06-01 10:00:00,000) - Job has timed out. Ran 238 minutes out of requested 240 minutes."),
    # PyTorch 2.4+'s watchdog line
    ("nccl-watchdog-timeout", "[rank2]:[E0601 10:00:00.000000000 ProcessGroupNCCL.cpp:2395] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 41 PG status: last enqueued work: 42, last completed work: 40"),
    # NCCL's interface search failing outside the bootstrap
    ("nccl-network-hang", "gpu-7:3310:3402 [0] NCCL WARN NET/Socket : no interface found"),
    ("nccl-network-hang", "gpu-7:3310:3402 [0] misc/socket.cc:237 NCCL WARN Net : No interface found in the same subnet as remote address 10.1.2.3<29500>"),
    # Slurm 25.05's scancel banner names the signal
    ("slurm-job-stopped-triage", "slurmstepd: error: *** JOB 4410 ON gpu-a12 CANCELLED AT 2025-06-01T10:00:00 DUE to SIGNAL Terminated ***"),
]

# (entry, a line of the same sources that is not the entry's cause)
NEAR_MISSES = [
    ("gpu-ecc-error", "[Wed Mar  5 01:02:03 2025] NVRM: Xid (PCI:0000:4e:00): 92, pid=2231, name=python3, High single-bit ECC error rate"),
    ("gpu-ecc-error", "            DRAM Uncorrectable                : 0"),
    ("gpu-ecc-error", "amdgpu 0000:c1:00.0: amdgpu: no uncorrectable hardware errors detected in umc block"),
    ("gpu-ecc-error", "amdgpu 0000:c1:00.0: amdgpu: 2 correctable hardware errors detected in umc block"),
    ("nccl-invalid-usage-duplicate-gpu", "node-3:1200:1301 [1] NCCL INFO Multiple ranks on the same GPU detected and allowed. Disabling NVLS."),
    ("slurm-job-stopped-triage", "slurmstepd: error: *** JOB 4410 ON gpu-a12 CANCELLED AT 2025-06-01T10:00:00 DUE TO TIME LIMIT ***"),
    ("no-gpu-visible", "MisconfigurationException: `MPSAccelerator` can not run on your system since the accelerator is not available."),
    ("slurm-time-limit", "submitit INFO (2025-06-01 10:00:00,000) - Job has not timed out. Ran 15 minutes out of requested 240 minutes."),
    # HDF5's read failure (an I/O error, not a full disk); TensorFlow's other RESOURCE_EXHAUSTED statuses
    ("disk-full-on-save", ", filename = 'data/train.h5', file descriptor = 3, errno = 5, error message = 'Input/output error', buf = "
                          "0x55d0c1a2b000, total read size = 4096, bytes this sub-read = 4096, bytes actually read = 18446744073709551615, offset = 0)"),
    ("disk-full-on-save", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: /data/shards/train-00017-of-01024; Too many open files"),
    ("disk-full-on-save", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8192,8192] and "
                          "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
]


@pytest.mark.parametrize("entry_id,line", FORMS, ids=[f"{e}-{i}" for i, (e, _) in enumerate(FORMS)])
def test_a_form_the_source_prints_makes_its_entry_the_confident_answer(matcher, bundled_kb, entry_id: str, line: str):
    entry = bundled_kb.get(entry_id)
    result = check_example(matcher, entry, "match", 0, line)
    assert result.ok, f"{entry_id}: {result.detail}"
    best = matcher.diagnose(line).best
    assert best is not None and best.kind in ("anchor", "regex"), f"{entry_id} won on {best.kind if best else None}"


@pytest.mark.parametrize("entry_id,line", NEAR_MISSES, ids=[f"{e}-{i}" for i, (e, _) in enumerate(NEAR_MISSES)])
def test_a_neighbouring_line_of_the_same_source_is_no_confident_answer(matcher, bundled_kb, entry_id: str, line: str):
    result = check_example(matcher, bundled_kb.get(entry_id), "no_match", 0, line)
    assert result.ok, f"{entry_id}: {result.detail}"
