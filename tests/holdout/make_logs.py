"""Assemble the long multi-rank logs of the held-out set, deterministically.

Each log mixes many ranks/hosts of healthy training output with one root cause
on one rank and the symptoms it triggers on the others (watchdog timeouts,
ncclRemoteError, ChildFailedError). The error lines themselves are copied from
public issues (URLs in each log's `# source:` header); host names, pids and
timestamps are generated. Re-running this script rewrites identical files.

Usage: python tests/holdout/make_logs.py
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

# `python tests/holdout/make_logs.py` puts only tests/holdout on sys.path; tests.* needs the root
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests import loggen  # noqa: E402

LOG_DIR = Path(__file__).parent / "logs"
TORCHRUN = loggen.Torchrun(
    "/opt/conda/bin/torchrun",
    33,
    "sys.exit(load_entry_point('torch==2.3.0', 'console_scripts', 'torchrun')())",
    "/opt/conda/lib/python3.10/site-packages",
)


def _ts(rng: random.Random, base_min: int, i: int) -> str:
    minute = base_min + i // 60
    return f"2025-03-21 {2 + minute // 60:02d}:{minute % 60:02d}:{i % 60:02d},{rng.randint(100, 999)}"


def _step_line(step: int, rng: random.Random) -> str:
    loss = 2.9 - step * 0.0004 + rng.random() * 0.05
    return (
        f"iteration {step:>6}/  250000 | consumed samples: {step * 512:>10} | "
        f"elapsed time per iteration (ms): {rng.randint(980, 1040)}.{rng.randint(0, 9)} | "
        f"learning rate: 2.9{rng.randint(10, 99)}E-04 | lm loss: {loss:.6E} | "
        f"loss scale: 1.0 | grad norm: {0.8 + rng.random() * 0.3:.3f} |"
    )


def _nccl_init(host: str, pid: int, local: int, rank: int, nranks: int) -> list[str]:
    tid = pid + 211
    return [
        f"{host}:{pid}:{pid} [{local}] NCCL INFO Bootstrap : Using ens32:10.1.{rank // 8}.{10 + rank % 8}<0>",
        f"{host}:{pid}:{pid} [{local}] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
        f"{host}:{pid}:{tid} [{local}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ens32:10.1.{rank // 8}.{10 + rank % 8}<0>",
        f"{host}:{pid}:{tid} [{local}] NCCL INFO Channel 00/0 : {rank}[{local}] -> {(rank + 1) % nranks}[{(local + 1) % 8}] via P2P/CUMEM",
        f"{host}:{pid}:{tid} [{local}] NCCL INFO comm 0x{0x55d4a0000000 + rank * 0x1000:x} rank {rank} nranks {nranks} cudaDev {local} nvmlDev {local} busId {local * 0x10 + 0x18}000 commId 0x6a3e1f0c2b9d7e41 - Init COMPLETE",
    ]


def _watchdog(rank: int, seq: int, op: str, numel: int) -> list[str]:
    stamps = [
        f"E321 02:07:08.{408271257 + rank * 7919}",
        f"E321 02:07:08.{465150152 + rank * 13}",
        f"E321 02:07:08.{465300000 + rank * 17}",
        f"E321 02:07:08.{465400000 + rank * 19}",
        f"E321 02:07:08.{465500000 + rank * 23}",
    ]
    return loggen.watchdog_timeout(
        rank, seq, op, numel, ran_for_ms=600004 + rank * 3, last_enqueued=seq + 2, stamps=stamps, tag=f"[rank{rank}]:"
    )


def _child_failed(script: str, host: str, rank: int, local: int, exitcode: int, pid: int) -> list[str]:
    failure = loggen.Failure(rank, local, exitcode, pid)
    return loggen.child_failed_error(TORCHRUN, script, host, "2025-03-21_02:07:11", [failure])


def _healthy_block(prefix: Callable[[int], str], ranks: list[int], steps: range, rng: random.Random) -> list[str]:
    out: list[str] = []
    for step in steps:
        for r in ranks:
            if r == ranks[0] or rng.random() < 0.15:
                out.append(prefix(r) + _step_line(step, rng))
    return out


def log_torchrun_cuda_oom() -> tuple[str, list[str]]:
    """4 nodes x 8 ranks, `host: [rankN]:` prefixes; rank 17 OOMs, the rest time out."""
    rng = random.Random(17)
    hosts = [f"gpu-a100-{n:03d}" for n in (12, 13, 14, 15)]
    def host_of(r: int) -> str:
        return hosts[r // 8]
    def pfx(r: int) -> str:
        return f"{host_of(r)}: [rank{r}]: "
    lines = [
        "# source: synthetic multi-node torchrun log assembled by tests/holdout/make_logs.py; "
        "OOM text from https://github.com/antgroup/echomimic_v2/issues/115 and https://github.com/FoundationVision/GenerateU/issues/10, "
        "watchdog text from https://github.com/hiyouga/LlamaFactory/issues/7396, ChildFailedError from https://github.com/OpenBMB/MiniCPM-V/issues/770",
    ]
    for h in hosts:
        lines += [
            f"{h}: W0321 01:55:02.114000 140213 torch/distributed/run.py:779] ",
            f"{h}: W0321 01:55:02.114000 140213 torch/distributed/run.py:779] *****************************************",
            f"{h}: W0321 01:55:02.114000 140213 torch/distributed/run.py:779] {loggen.OMP_THREADS_WARNING} ",
            f"{h}: W0321 01:55:02.114000 140213 torch/distributed/run.py:779] *****************************************",
        ]
    for r in range(32):
        lines += [pfx(r) + ln for ln in _nccl_init(host_of(r), 80000 + r, r % 8, r, 32)]
    lines += _healthy_block(pfx, list(range(32)), range(1500, 1560), rng)
    lines += [
        pfx(17) + "Traceback (most recent call last):",
        pfx(17) + '  File "/workspace/pretrain_gpt.py", line 211, in <module>',
        pfx(17) + "    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)",
        pfx(17) + '  File "/workspace/megatron/training/training.py", line 1102, in train_step',
        pfx(17) + "    losses_reduced = forward_backward_func(",
        pfx(17) + '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 116, in forward',
        pfx(17) + "    return F.linear(input, self.weight, self.bias)",
        pfx(17) + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.22 GiB. GPU 1 has a total capacity of 79.15 GiB of which 3.71 GiB is free. Including non-PyTorch memory, this process has 75.42 GiB memory in use. Of the allocated memory 72.14 GiB is allocated by PyTorch, and 771.43 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    ]
    lines += _healthy_block(pfx, [r for r in range(32) if r != 17], range(1560, 1562), rng)
    for r in range(32):
        if r != 17:
            lines += [pfx(r) + ln for ln in _watchdog(r, 47123, "ALLREDUCE", 466119168)]
    lines += [f"{hosts[2]}: W0321 02:07:10.532000 140213 torch/distributed/elastic/multiprocessing/api.py:858] Sending process {80000 + r} closing signal SIGTERM" for r in range(16, 24) if r != 17]
    lines += [f"{hosts[2]}: E0321 02:07:11.301000 140213 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 1 (pid: 80017) of binary: /opt/conda/bin/python"]
    lines += [f"{hosts[2]}: " + ln for ln in _child_failed("pretrain_gpt.py", hosts[2], 17, 1, 1, 80017)]
    for h in (hosts[0], hosts[1], hosts[3]):
        lines.append(f"{h}: E0321 02:07:12.000000 140213 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -6) local_rank: 0 (pid: 80000) of binary: /opt/conda/bin/python")
    lines.append("srun: error: gpu-a100-014: task 2: Exited with exit code 1")
    lines.append("srun: error: gpu-a100-012: task 0: Exited with exit code 1")
    return "torchrun_rank17_cuda_oom.log", lines


def log_accelerate_ecc() -> tuple[str, list[str]]:
    """2 nodes x 8 processes, `[defaultN]:` prefixes (accelerate/torchrun --tee); one ECC error."""
    rng = random.Random(3)
    def pfx(r: int) -> str:
        return f"[default{r % 8}]:"
    lines = [
        "# source: synthetic accelerate launch log (node 1 of 2, tee'd with [defaultN]: prefixes) assembled by tests/holdout/make_logs.py; "
        "ECC text from https://github.com/kohya-ss/sd-scripts/issues/1434 and https://github.com/huggingface/accelerate/issues/1192, "
        "ncclRemoteError text from https://github.com/NVIDIA/nccl/issues/934",
        "The following values were not passed to `accelerate launch` and had defaults used instead:",
        "\t`--dynamo_backend` was set to a value of `'no'`",
        "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
    ]
    for r in range(8):
        lines += [pfx(r) + ln for ln in _nccl_init("trn-node-b", 51000 + r, r, 8 + r, 16)]
    for step in range(200, 250):
        for r in range(8):
            if r == 0 or rng.random() < 0.2:
                lines.append(f"{pfx(r)}{{'loss': {1.9 - step * 0.001 + rng.random() * 0.02:.4f}, 'grad_norm': {0.5 + rng.random():.4f}, 'learning_rate': 1.99{rng.randint(10, 99)}e-05, 'epoch': {step / 1000:.2f}}}")
                lines.append(f"{pfx(r)} {step * 100 // 2000:>3}%|{'#' * (step // 50)}{' ' * (10 - step // 50)}| {step}/2000 [{step // 60:02d}:{step % 60:02d}<55:12,  1.66s/it]")
    ecc = [
        "Traceback (most recent call last):",
        '  File "/home/ubuntu/sd-scripts/library/sdxl_original_unet.py", line 257, in get_timestep_embedding',
        "    exponent = exponent / (half_dim - downscale_freq_shift)",
        *loggen.cuda_error("RuntimeError: CUDA error: uncorrectable ECC error encountered"),
        "",
        "[E ProcessGroupNCCL.cpp:916] [Rank 13] NCCL watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered",
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7a71e4e84617 in /usr/lib/python3/dist-packages/torch/lib/libc10.so)",
    ]
    lines += ["[default5]:" + ln for ln in ecc]
    for r in (0, 1, 2, 3, 4, 6, 7):
        peer = f"NET/IB : Got completion from peer 10.1.1.15<{38536 + r}> with error 5, opcode 48, len 32710, vendor err 249"
        lines += [
            f"{pfx(r)}[rank{8 + r}]: " + ln
            for ln in loggen.remote_error("../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1347", "2.18.5", peer)
        ]
    lines += [f"W0321 03:11:0{i}.000000 139 torch/distributed/elastic/multiprocessing/api.py:858] Sending process {51000 + i} closing signal SIGTERM" for i in range(8) if i != 5]
    lines += _child_failed("train_sdxl.py", "trn-node-b", 13, 5, 1, 51005)
    return "accelerate_default5_ecc.log", lines


def log_srun_host_oom() -> tuple[str, list[str]]:
    """srun -l output (`N: ` prefixes), 16 tasks on 2 nodes; task 3 is OOM-killed by the host."""
    rng = random.Random(9)
    def pfx(r: int) -> str:
        return f"{r}: "
    lines = [
        "# source: synthetic `srun -l` log assembled by tests/holdout/make_logs.py; "
        "oom_kill text from https://github.com/nextflow-io/nextflow/issues/5932 and https://github.com/chrisknewman/tusas/issues/149, "
        "watchdog text from https://github.com/XPixelGroup/BasicSR/issues/737",
        "+ export NCCL_DEBUG=WARN",
        "+ srun -l --kill-on-bad-exit=1 python -u train.py --config configs/vit_h.yaml",
    ]
    for r in range(16):
        lines.append(pfx(r) + f"| distributed init (rank {r}): env://, gpu {r % 8}")
    lines += _healthy_block(pfx, list(range(16)), range(800, 880), rng)
    for r in range(16):
        if rng.random() < 0.5:
            lines.append(pfx(r) + "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 12, which is smaller than what this DataLoader is going to create.")
    lines += _healthy_block(pfx, list(range(16)), range(880, 900), rng)
    lines += [
        "slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM Killed.",
        "srun: error: nid001277: task 3: Out Of Memory",
    ]
    for r in range(16):
        if r != 3:
            lines += [pfx(r) + ln for ln in _watchdog(r, 808, "ALLREDUCE", 9801523)[:2]]
    lines += [
        "srun: Terminating StepId=440575.0",
        "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***",
        "srun: error: nid001277: tasks 0-2,4-7: Terminated",
        "srun: error: nid001278: tasks 8-15: Terminated",
        "srun: Force Terminated StepId=440575.0",
    ]
    return "srun_task3_host_oom.log", lines


def log_mpirun_shm_bus_error() -> tuple[str, list[str]]:
    """mpirun/horovod `[1,N]<stdout|stderr>:` prefixes; a DataLoader worker on rank 3 dies of SIGBUS."""
    rng = random.Random(5)
    def pfx(r: int) -> str:
        return f"[1,{r}]<stdout>:"
    lines = [
        "# source: synthetic mpirun log assembled by tests/holdout/make_logs.py; "
        "bus-error text from https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/16 and https://github.com/kan-bayashi/ParallelWaveGAN/issues/314, "
        "prefix style from https://github.com/horovod/horovod/issues/3929, remote-error text from https://github.com/NVIDIA/nccl/issues/2076",
    ]
    for r in range(8):
        lines += [pfx(r) + ln for ln in _nccl_init("smc-gpu-03", 29878 + r, r, r, 8)]
    lines += _healthy_block(pfx, list(range(8)), range(34000, 34140), rng)
    bus_error = loggen.dataloader_bus_error("/usr/local/lib/python3.8/dist-packages", 1133, 3216)
    bus_error.append("RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly")
    lines += ["[1,3]<stderr>:" + ln for ln in bus_error]
    reset = "socketProgressOpt: Call to recv from 172.16.0.3<33759> failed : Connection reset by peer"
    for r in (0, 1, 2, 4, 5, 6, 7):
        lines += [
            f"[1,{r}]<stderr>:" + ln
            for ln in loggen.remote_error("/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268", "2.21.5", reset)
        ]
    rule = loggen.MPIRUN_ABORTED[0]
    lines += loggen.MPIRUN_ABORTED + [rule] + loggen.mpirun_first_failure("[[39817,1],3]", 1) + [rule]
    return "mpirun_rank3_shm_bus_error.log", lines


def log_sagemaker_illegal_access() -> tuple[str, list[str]]:
    """SageMaker CloudWatch-style `[1,mpirank:N,algo-K]<stderr>:` lines; algo-2 hits an illegal memory access."""
    rng = random.Random(11)
    def pfx(r: int) -> str:
        return f"[1,mpirank:{r},algo-{r // 8 + 1}]<stdout>:"
    lines = [
        "# source: synthetic SageMaker training-job log (4 x ml.p4d.24xlarge, algo-1..algo-4) assembled by tests/holdout/make_logs.py; "
        "illegal-access text from https://github.com/RVC-Boss/GPT-SoVITS/issues/1341 and https://github.com/pytorch/pytorch/issues/180280, "
        "remote-error text from https://github.com/deepseek-ai/DeepEP/issues/106",
        "2025-03-21 02:00:01 Starting - Starting the training job...",
        "2025-03-21 02:00:25 Starting - Preparing the instances for training...",
        "2025-03-21 02:03:40 Downloading - Downloading input data...",
        "2025-03-21 02:05:02 Training - Training image download completed. Training in progress.",
        "bash: cannot set terminal process group (-1): Inappropriate ioctl for device",
        "bash: no job control in this shell",
        "2025-03-21 02:05:09,771 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training",
        "2025-03-21 02:05:09,811 sagemaker-training-toolkit INFO     Waiting for MPI workers to establish their SSH connections",
        "2025-03-21 02:05:10,402 sagemaker-training-toolkit INFO     Cannot connect to host algo-2 at port 22. Retrying...",
        "2025-03-21 02:05:15,407 sagemaker-training-toolkit INFO     Connection closed",
        "2025-03-21 02:05:15,913 sagemaker-training-toolkit INFO     Can connect to host algo-2 at port 22",
        "2025-03-21 02:05:16,120 sagemaker-training-toolkit INFO     Can connect to host algo-3 at port 22",
        "2025-03-21 02:05:16,433 sagemaker-training-toolkit INFO     Can connect to host algo-4 at port 22",
    ]
    for r in range(32):
        lines.append(f"{pfx(r)}algo-{r // 8 + 1}:{200 + r}:{200 + r} [{r % 8}] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)")
    lines += _healthy_block(pfx, list(range(32)), range(3000, 3040), rng)
    abort = [
        "terminate called after throwing an instance of 'c10::Error'",
        *loggen.cuda_error("  what():  CUDA error: an illegal memory access was encountered"),
        "Exception raised from ncclCommWatchdog at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1905 (most recent call first):",
        "frame #5: c10d::ProcessGroupNCCL::watchdogHandler() + 0x782 (0x7f9c999593d2 in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
        "frame #6: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f9c9995afdd in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
    ]
    lines += ["[1,mpirank:12,algo-2]<stderr>:" + ln for ln in abort]
    for r in range(32):
        if r != 12:
            lines += [
                f"[1,mpirank:{r},algo-{r // 8 + 1}]<stderr>:[rank{r}]:[E321 02:41:10.{r:03d}] ProcessGroupNCCL.cpp:1534] [PG 0 Rank {r}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5",
                f"[1,mpirank:{r},algo-{r // 8 + 1}]<stderr>:{loggen.NCCL_REMOTE_ERROR}",
            ]
    lines += [
        "--------------------------------------------------------------------------",
        "mpirun.real noticed that process rank 12 with PID 0 on node algo-2 exited on signal 6 (Aborted).",
        "--------------------------------------------------------------------------",
        "2025-03-21 02:41:22,019 sagemaker-training-toolkit ERROR    Reporting training FAILURE",
        "2025-03-21 02:41:22,019 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:",
        "ExitCode 134",
        'ErrorMessage "terminate called after throwing an instance of \'c10::Error\'',
        ' what():  CUDA error: an illegal memory access was encountered"',
        "2025-03-21 02:41:40 Uploading - Uploading generated training model",
        "2025-03-21 02:41:51 Failed - Training job failed",
    ]
    return "sagemaker_algo2_illegal_memory_access.log", lines


def log_disk_full_on_rank0() -> tuple[str, list[str]]:
    """torchrun on 2 nodes, `host: [rankN]:` prefixes; rank 0 fails to write the checkpoint, others wait in a barrier."""
    rng = random.Random(28)
    hosts = ["dgx-b07", "dgx-b08"]
    def pfx(r: int) -> str:
        return f"{hosts[r // 8]}: [rank{r}]:"
    lines = [
        "# source: synthetic torchrun log assembled by tests/holdout/make_logs.py; "
        "save failure text from https://github.com/databrickslabs/dolly/issues/139 and https://github.com/h2oai/h2o-llmstudio/issues/214, "
        "watchdog text from https://github.com/NVIDIA/nccl/issues/1409",
    ]
    for r in range(16):
        lines += [pfx(r) + ln for ln in _nccl_init(hosts[r // 8], 90000 + r, r % 8, r, 16)]
    lines += _healthy_block(pfx, list(range(16)), range(9900, 10000), rng)
    lines += [
        "dgx-b07: [rank0]:[INFO|trainer.py:2926] 2025-03-21 04:48:54,430 >> Saving model checkpoint to /scratch/ckpt/llama-7b/checkpoint-10000",
        "dgx-b07: [rank0]:[INFO|configuration_utils.py:458] 2025-03-21 04:48:55,234 >> Configuration saved in /scratch/ckpt/llama-7b/checkpoint-10000/config.json",
        "dgx-b07: [rank0]:Traceback (most recent call last):",
        'dgx-b07: [rank0]:  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 441, in save',
        "dgx-b07: [rank0]:    _save(obj, opened_zipfile, pickle_module, pickle_protocol)",
        'dgx-b07: [rank0]:  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 668, in _save',
        "dgx-b07: [rank0]:    zip_file.write_record(name, storage.data_ptr(), num_bytes)",
        "dgx-b07: [rank0]:RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/228: file write failed",
        "dgx-b07: [rank0]:",
        "dgx-b07: [rank0]:During handling of the above exception, another exception occurred:",
        "dgx-b07: [rank0]:",
        "dgx-b07: [rank0]:Traceback (most recent call last):",
        'dgx-b07: [rank0]:  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 440, in save',
        "dgx-b07: [rank0]:    with _open_zipfile_writer(f) as opened_zipfile:",
        "dgx-b07: [rank0]:OSError: [Errno 28] No space left on device",
    ]
    for r in range(1, 16):
        lines += [pfx(r) + ln for ln in _watchdog(r, 80078, "BROADCAST" if r == 7 else "ALLREDUCE", 5056 if r == 7 else 2106881)[:2]]
    lines += [f"{hosts[0]}: E0321 04:58:57.000000 1 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 0 (pid: 90000) of binary: /opt/conda/bin/python"]
    lines += [f"{hosts[0]}: " + ln for ln in _child_failed("train.py", hosts[0], 0, 0, 1, 90000)]
    return "torchrun_rank0_disk_full.log", lines


def log_sbatch_time_limit() -> tuple[str, list[str]]:
    """A healthy multi-node sbatch log that simply runs out of wall time."""
    rng = random.Random(42)
    def pfx(r: int) -> str:
        return f"{r}: "
    lines = [
        "# source: synthetic sbatch output assembled by tests/holdout/make_logs.py; "
        "time-limit text from https://github.com/ZettaAI/zetta_utils/issues/671 and https://github.com/desihub/desitarget/issues/628",
        "SLURM_JOB_ID=494583 SLURM_NNODES=4 SLURM_NTASKS=32",
        "+ srun -l --cpu-bind=none bash -c 'python -u pretrain.py ...'",
    ]
    for r in range(32):
        lines.append(pfx(r) + f"> initializing torch distributed ... rank {r} of 32 (local {r % 8})")
    lines += _healthy_block(pfx, list(range(32)), range(41000, 41280), rng)
    lines += [
        "0:  saving checkpoint at iteration   41250 to /lustre/ckpt/run7",
        "0:   successfully saved checkpoint at iteration   41250 to /lustre/ckpt/run7",
    ]
    lines += _healthy_block(pfx, list(range(32)), range(41280, 41300), rng)
    lines += [
        "srun: Job step aborted: Waiting up to 47 seconds for job step to finish.",
        "slurmstepd: error: *** JOB 494583 ON gpu-h100-041 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
        "slurmstepd: error: *** STEP 494583.0 ON gpu-h100-041 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
        "srun: error: gpu-h100-041: tasks 0-7: Terminated",
        "srun: error: gpu-h100-042: tasks 8-15: Terminated",
        "srun: error: gpu-h100-043: tasks 16-23: Terminated",
        "srun: error: gpu-h100-044: tasks 24-31: Terminated",
    ]
    return "sbatch_time_limit.log", lines


def log_healthy_negative() -> tuple[str, list[str]]:
    """A long healthy run with only harmless warnings: nothing should be diagnosed."""
    rng = random.Random(1)
    def pfx(r: int) -> str:
        return f"[default{r}]:"
    lines = [
        "# source: synthetic healthy torchrun log assembled by tests/holdout/make_logs.py (harmless warnings only; "
        "NNPACK line from https://github.com/Sachini/ronin/issues/51, MoE config line from https://github.com/sgl-project/sglang/issues/3204)",
        f"W0321 01:00:00.000000 1 torch/distributed/run.py:779] {loggen.OMP_THREADS_WARNING} ",
    ]
    for r in range(8):
        lines += [pfx(r) + ln for ln in _nccl_init("dev-h100-01", 7000 + r, r, r, 8)]
        lines.append(f"{pfx(r)}[W NNPACK.cpp:53] Could not initialize NNPACK! Reason: Unsupported hardware.")
        lines.append(f"{pfx(r)}/opt/conda/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
    lines += _healthy_block(pfx, list(range(8)), range(0, 300), rng)
    lines += [
        "[default0]:[2025-03-21 03:00:01 TP0] Using default MoE config. Performance might be sub-optimal! Config file not found at /opt/sglang/configs/E=160,N=192,device_name=NVIDIA_H100_80GB_HBM3.json",
        "[default0]:saving checkpoint to /checkpoints/final",
        "[default0]:Training completed. Do not forget to share your model on huggingface.co/models =)",
        "[default0]:{'train_runtime': 5123.41, 'train_samples_per_second': 99.9, 'train_steps_per_second': 0.058, 'train_loss': 1.4501, 'epoch': 1.0}",
    ]
    return "healthy_run_negative.log", lines


BUILDERS = (
    log_torchrun_cuda_oom,
    log_accelerate_ecc,
    log_srun_host_oom,
    log_mpirun_shm_bus_error,
    log_sagemaker_illegal_access,
    log_disk_full_on_rank0,
    log_sbatch_time_limit,
    log_healthy_negative,
)


def generate(log_dir: Path = LOG_DIR) -> list[tuple[Path, int]]:
    """Write every log to `log_dir`; returns each file with its line count."""
    log_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for build in BUILDERS:
        name, lines = build()
        path = log_dir / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append((path, len(lines)))
    return written


def main() -> None:
    for path, lines in generate():
        print(f"{path.name}: {lines} lines")


if __name__ == "__main__":
    main()
