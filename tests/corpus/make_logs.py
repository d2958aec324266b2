"""Generate the long multi-rank logs under tests/corpus/logs/.

Each log is a realistic failure of a multi-node job: healthy start-up and training noise
(NCCL INFO lines, iteration lines, harmless warnings), then the root cause on one or a few
ranks, then the symptom cascade (NCCL watchdog timeouts, ncclRemoteError, ChildFailedError)
on the others, interleaved the way several ranks writing to one file interleave.

The error text itself is copied from the public issues cited in SCENARIOS (and in
cases.jsonl); only the rank fan-out, host names, timestamps and INFO noise are generated.
Output is deterministic: every scenario has its own seeded random generator, so running
`python tests/corpus/make_logs.py` twice gives byte-identical files.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

# `python tests/corpus/make_logs.py` puts only tests/corpus on sys.path; tests.* needs the root
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests import loggen  # noqa: E402

LOG_DIR = Path(__file__).parent / "logs"
CLEAN_DIR = Path(__file__).parent.parent / "clean"
PY = "/storage3/miniconda3/envs/.cuda12/lib/python3.11/site-packages"
TORCHRUN = loggen.Torchrun("/storage3/miniconda3/envs/.cuda12/bin/torchrun", 8, "sys.exit(main())", PY)

Prefix = Callable[[int], str]


@dataclass
class Job:
    """Shape of one job: hosts, GPUs per host and how each rank's lines are prefixed."""

    hosts: list[str]
    gpus: int
    prefix: Prefix
    rng: random.Random
    start: datetime
    lines: list[str] = field(default_factory=list)
    skew_s: float = 0.0  # added to line-count-based stamps to model a silent wait (a timeout)

    @property
    def world(self) -> int:
        return len(self.hosts) * self.gpus

    def host_of(self, rank: int) -> str:
        return self.hosts[rank // self.gpus]

    def emit(self, rank: int, text: str) -> None:
        self.lines.append(self.prefix(rank) + text)

    def raw(self, text: str) -> None:
        self.lines.append(text)

    def interleave(self, per_rank: dict[int, list[str]]) -> None:
        """Append every rank's block, lines interleaved but each rank's order kept."""
        queues = {r: list(block) for r, block in per_rank.items() if block}
        while queues:
            rank = self.rng.choice(sorted(queues))
            burst = self.rng.randint(1, 3)
            for _ in range(burst):
                if not queues[rank]:
                    break
                self.emit(rank, queues[rank].pop(0))
            if not queues[rank]:
                del queues[rank]

    def write(self, name: str, header: str, folder: Path = LOG_DIR) -> Path:
        path = folder / name
        path.write_text("\n".join([f"# {line}" for line in header.strip().splitlines()] + self.lines) + "\n")
        return path


def ts(job: Job, offset_s: float) -> datetime:
    return job.start + timedelta(seconds=offset_s)


def torch_ts(t: datetime, level: str = "E") -> str:
    """PyTorch c10 log stamp, e.g. E0428 22:05:11.123456789."""
    return f"{level}{t:%m%d %H:%M:%S}.{t.microsecond:06d}{t.microsecond % 997:03d}"


# ---------------------------------------------------------------- healthy noise


def nccl_init(job: Job, ranks: Iterator[int] | None = None, iface: str = "enp0s12") -> None:
    per_rank: dict[int, list[str]] = {}
    for r in ranks if ranks is not None else range(job.world):
        host, local = job.host_of(r), r % job.gpus
        pid = 925940 + r * 7
        tag = f"{host}:{pid}:{pid} [{local}]"
        ip = f"10.18.{job.hosts.index(host)}.{11 + local}"
        block = [
            f"{tag} NCCL INFO Bootstrap : Using {iface}:{ip}<0>",
            f"{tag} NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
            f"{tag} NCCL INFO cudaDriverVersion 12020",
        ]
        if r == 0:
            block.append("NCCL version 2.19.3+cuda12.3")
        block += [
            f"{tag} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB {iface}:{ip}<0>",
            f"{tag} NCCL INFO Using network IB",
            f"{tag} NCCL INFO comm 0x{0x55d3a0000000 + r * 0x1000:x} rank {r} nranks {job.world} cudaDev {local} nvmlDev {local} busId {local + 4}000 commId 0x9f2a6c1e5b7d0c13 - Init START",
            f"{tag} NCCL INFO Channel 00/0 : {r}[{local}] -> {(r + 1) % job.world}[{(local + 1) % job.gpus}] via P2P/IPC",
            f"{tag} NCCL INFO Connected all rings",
            f"{tag} NCCL INFO Connected all trees",
            f"{tag} NCCL INFO threadThresholds 8/8/64 | 256/8/64 | 512 | 512",
            f"{tag} NCCL INFO comm 0x{0x55d3a0000000 + r * 0x1000:x} rank {r} nranks {job.world} cudaDev {local} nvmlDev {local} busId {local + 4}000 commId 0x9f2a6c1e5b7d0c13 - Init COMPLETE",
        ]
        per_rank[r] = block
    job.interleave(per_rank)


def startup_banner(job: Job) -> None:
    for r in range(job.world):
        if r % job.gpus == 0:
            job.emit(r, f"W0428 21:51:02.118000 140211 torch/distributed/run.py:779] {loggen.OMP_THREADS_WARNING}")
    job.emit(0, (
        f"using world size: {job.world}, data-parallel size: {job.world // 2}, context-parallel size: 1, "
        "tensor-model-parallel size: 2, pipeline-model-parallel size: 1"
    ))
    job.emit(0, "> initializing torch distributed ...")
    job.emit(0, "> initialized tensor model parallel with size 2")
    job.emit(0, "> compiling dataset index builder ...")
    job.emit(0, ">>> done with dataset index builder. Compilation time: 0.081 seconds")
    for r in job.rng.sample(range(job.world), k=min(4, job.world)):
        job.emit(r, f"{PY}/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.")
    job.emit(0, "[after model, optimizer, and learning rate scheduler are built] datetime: 2024-04-28 21:53:40")
    job.emit(0, "training ...")


def iterations(job: Job, first: int, count: int, rank: int | None = None, every: int = 10) -> int:
    """Megatron-style iteration lines, printed by the last rank as Megatron does."""
    printer = job.world - 1 if rank is None else rank
    loss = 7.2 - first * 0.0009
    it = first
    for _ in range(count):
        it += every
        loss = max(1.9, loss - job.rng.uniform(0.0, 0.02))
        ms = job.rng.uniform(5080, 5190)
        when = job.start + timedelta(seconds=120 + it * 5.13)
        job.emit(printer, (
            f" [{when:%Y-%m-%d %H:%M:%S}] iteration {it:>8}/  500000 | consumed samples: {it * 1024:>12} | "
            f"elapsed time per iteration (ms): {ms:.1f} | learning rate: {min(3e-4, it * 1.5e-7):.3E} | global batch size:  1024 | "
            f"lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {job.rng.uniform(0.8, 2.5):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |"
        ))
        if job.rng.random() < 0.08:
            job.emit(0, f"[Rank 0] (after {it} iterations) memory (MB) | allocated: 30211.5 | max allocated: 61822.9 | reserved: 64318.0 | max reserved: 64318.0")
        if job.rng.random() < 0.05:
            job.emit(0, f"saving checkpoint at iteration {it:>8} to /storage3/ckpt/13b in torch format")
            job.emit(0, f"  successfully saved checkpoint from iteration {it:>8} to /storage3/ckpt/13b")
    return it


def healthy_run(job: Job, first_iteration: int, count: int, iface: str = "enp0s12") -> int:
    """Start-up banner, NCCL init on every rank, then `count` iteration lines."""
    startup_banner(job)
    nccl_init(job, iface=iface)
    return iterations(job, first_iteration, count)


# ---------------------------------------------------------------- error blocks

MEGATRON_STACK = [
    "Traceback (most recent call last):",
    '  File "/storage3/Megatron-LM/pretrain_gpt.py", line 230, in <module>',
    "    pretrain(train_valid_test_datasets_provider,",
    '  File "/storage3/Megatron-LM/megatron/training/training.py", line 255, in pretrain',
    "    iteration, num_floating_point_operations_so_far = train(",
    '  File "/storage3/Megatron-LM/megatron/training/training.py", line 1012, in train',
    "    train_step(forward_step_func,",
    '  File "/storage3/Megatron-LM/megatron/training/training.py", line 548, in train_step',
    "    losses_reduced = forward_backward_func(",
    '  File "/storage3/Megatron-LM/megatron/core/pipeline_parallel/schedules.py", line 381, in forward_backward_no_pipelining',
    "    backward_step(input_tensor, output_tensor, output_tensor_grad, model_type, config)",
]


def oom_block(rank: int, local: int) -> list[str]:
    return MEGATRON_STACK + [
        '  File "/storage3/Megatron-LM/megatron/core/pipeline_parallel/schedules.py", line 239, in backward_step',
        "    torch.autograd.backward(output_tensor[0], grad_tensors=output_tensor_grad[0])",
        f'  File "{PY}/torch/autograd/__init__.py", line 266, in backward',
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU {local} has a total capacity of 79.11 GiB of which 1.83 GiB is free. Including non-PyTorch memory, this process has 77.27 GiB memory in use. Of the allocated memory 71.06 GiB is allocated by PyTorch, and 4.63 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    ]


def cuda_error_block(message: str, extra: list[str] | None = None) -> list[str]:
    return MEGATRON_STACK + [
        '  File "/storage3/Megatron-LM/megatron/core/tensor_parallel/layers.py", line 812, in forward',
        "    output_parallel = self._forward_impl(",
        *loggen.cuda_error(f"RuntimeError: CUDA error: {message}", stop=""),
        "",
    ] + (extra or [])


def watchdog_block(job: Job, rank: int, t: datetime, seq: int, op: str = "ALLREDUCE", numel: int = 466119168) -> list[str]:
    stamp = torch_ts(t)
    # torch >= 2.2 tags its C++ log lines "[rankN]:"; skip it when the job's prefix already carries it
    tag = "" if "[rank" in job.prefix(rank) else f"[rank{rank}]:"
    ran_for_ms = 600000 + job.rng.randint(20, 99)
    timeout = loggen.watchdog_timeout(rank, seq, op, numel, ran_for_ms=ran_for_ms, last_enqueued=seq + 1, stamps=[stamp] * 5, tag=tag)
    return timeout + [
        f"{tag}[{stamp} ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {loggen.work_nccl(seq, op, numel)} ran for 600070 milliseconds before timing out.",
        "Exception raised from checkTimeout at /opt/conda/conda-bld/pytorch_1704987288773/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):",
        f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in {PY}/torch/lib/libc10.so)",
        f"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in {PY}/torch/lib/libtorch_cuda.so)",
        f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in {PY}/torch/lib/libtorch_cuda.so)",
        f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in {PY}/torch/lib/libtorch_cuda.so)",
        f"frame #4: <unknown function> + 0xdfc74 (0x15554f329c74 in {PY}/torch/lib/../../../.././libstdc++.so.6)",
        "frame #5: <unknown function> + 0x81ca (0x155554e081ca in /lib/x86_64-linux-gnu/libpthread.so.0)",
        "frame #6: clone + 0x43 (0x155553e398d3 in /lib/x86_64-linux-gnu/libc.so.6)",
        "",
    ]


def remote_error_block(rank: int, peer_ip: str) -> list[str]:
    return [
        "Traceback (most recent call last):",
        '  File "/storage3/Megatron-LM/megatron/core/distributed/param_and_grad_buffer.py", line 219, in finish_grad_sync',
        "    self.communication_handle.wait()",
        *loggen.remote_error(
            "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275",
            "2.20.5",
            f"socketProgressOpt: Call to recv from {peer_ip}<{40000 + rank * 17}> failed : Connection reset by peer",
        ),
    ]


def child_failed_block(job: Job, host: str, failures: list[tuple[int, int, str]], t: datetime, script: str = "pretrain_gpt.py") -> list[str]:
    """torchrun's summary: failures = [(global_rank, exitcode, traceback_text)], first is the root cause."""
    first_rank, first_code, _ = failures[0]
    agent = f"E{t:%m%d %H:%M:%S}.{t.microsecond:06d} 140211 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: {first_code}) local_rank: {first_rank % job.gpus} (pid: {925940 + first_rank * 7}) of binary: /storage3/miniconda3/envs/.cuda12/bin/python"
    workers = [loggen.Failure(rank, rank % job.gpus, code, 925940 + rank * 7, tb) for rank, code, tb in failures]
    return [agent] + loggen.child_failed_error(TORCHRUN, script, host, f"{t:%Y-%m-%d_%H:%M:%S}", workers)


SIGABRT = "Signal 6 (SIGABRT) received by PID {pid}"


def torchrun_summaries(job: Job, t: datetime, first_by_host: dict[str, tuple[int, int, str]] | None = None) -> None:
    """One ChildFailedError summary per host, written by that host's torchrun agent."""
    first_by_host = first_by_host or {}
    for h_index, host in enumerate(job.hosts):
        ranks = list(range(h_index * job.gpus, (h_index + 1) * job.gpus))
        root = first_by_host.get(host, (ranks[0], -6, SIGABRT.format(pid=925940 + ranks[0] * 7)))
        others = [(r, -6, SIGABRT.format(pid=925940 + r * 7)) for r in ranks if r != root[0]]
        for line in child_failed_block(job, host, [root] + others[:3], t):
            job.emit(ranks[0], line)


# ---------------------------------------------------------------- prefixes


def host_rank_prefix(job_hosts: list[str], gpus: int) -> Prefix:
    return lambda r: f"{job_hosts[r // gpus]}: "


def make_job(seed: int, hosts: list[str], gpus: int, style: str) -> Job:
    rng = random.Random(seed)
    job = Job(hosts=hosts, gpus=gpus, prefix=lambda r: "", rng=rng, start=datetime(2024, 4, 28, 21, 51, 2))
    if style == "host":  # pdsh / srun piped through a host labeller
        job.prefix = lambda r: f"{hosts[r // gpus]}: "
    elif style == "host-rank":  # host labeller plus torch's own "[rankN]:" tag
        job.prefix = lambda r: f"{hosts[r // gpus]}: [rank{r}]:"
    elif style == "default":  # torchrun --tee 3 --role default, single host view
        job.prefix = lambda r: f"[default{r % gpus}]:"
    elif style == "host-default":
        job.prefix = lambda r: f"{hosts[r // gpus]}: [default{r % gpus}]:"
    elif style == "label":  # srun --label
        job.prefix = lambda r: f"{r}: "
    elif style == "label-ts":  # srun --label inside a timestamping wrapper
        def stamped(r: int) -> str:
            t = job.start + timedelta(seconds=len(job.lines) * 0.37 + job.skew_s)
            return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z {r:>3}: "
        job.prefix = stamped
    elif style == "mpi":  # mpirun --tag-output
        job.prefix = lambda r: f"[1,{r}]<stderr>:"
    elif style == "smp":  # SageMaker model parallel (mpirun under the hood), one CloudWatch stream per host
        job.prefix = lambda r: f"{hosts[r // gpus]}: [1,mpirank:{r},{hosts[r // gpus]}]<stderr>:"
    else:
        raise ValueError(style)
    return job


# ---------------------------------------------------------------- scenarios


def scenario_oom_rank3() -> Job:
    hosts = ["slurm0-a3-ghpc-8", "slurm0-a3-ghpc-9"]
    # the seed runbook shows both prefixes at once: host from the wrapper, [rankN]: from torch
    job = make_job(101, hosts, 8, "host-rank")
    healthy_run(job, 0, 140)
    job.interleave({3: oom_block(3, 3)})
    t = ts(job, 3000)
    job.interleave({r: watchdog_block(job, r, t, 4812) for r in range(16) if r != 3})
    job.prefix = lambda r: f"{hosts[r // 8]}: "
    torchrun_summaries(job, t, {hosts[0]: (3, 1, loggen.TRACEBACK_HINT)})
    job.raw("srun: error: slurm0-a3-ghpc-8: task 0: Exited with exit code 1")
    job.raw("srun: error: slurm0-a3-ghpc-9: task 1: Exited with exit code 1")
    return job


def scenario_illegal_memory_default() -> Job:
    hosts = ["gpu-node-17"]
    job = make_job(102, hosts, 8, "default")
    healthy_run(job, 2000, 180)
    job.interleave({5: cuda_error_block("an illegal memory access was encountered")})
    job.interleave({r: remote_error_block(r, "10.18.0.16") for r in range(8) if r != 5})
    t = ts(job, 2400)
    job.prefix = lambda r: ""
    for line in child_failed_block(job, hosts[0], [(5, 1, loggen.TRACEBACK_HINT)] + [(r, 1, loggen.TRACEBACK_HINT) for r in (0, 1, 2)], t):
        job.raw(line)
    return job


def scenario_ecc_label() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(4)]
    job = make_job(103, hosts, 8, "label")
    healthy_run(job, 10000, 160)
    job.interleave({12: cuda_error_block("uncorrectable ECC error encountered")})
    t = ts(job, 3000)
    job.interleave({r: watchdog_block(job, r, t, 22031) for r in range(32) if r != 12})
    torchrun_summaries(job, t, {hosts[1]: (12, 1, loggen.TRACEBACK_HINT)})
    job.raw("srun: error: slurm0-a3-ghpc-1: task 1: Exited with exit code 1")
    job.raw("srun: error: slurm0-a3-ghpc-0: task 0: Exited with exit code 1")
    return job


def scenario_dsa_mpi() -> Job:
    hosts = ["dgx-a100-03", "dgx-a100-04"]
    job = make_job(104, hosts, 8, "mpi")
    healthy_run(job, 500, 120)
    asserts = [
        f"../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [615,0,0], thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed."
        for t in range(96, 128)
    ]
    job.interleave({6: asserts + cuda_error_block("device-side assert triggered")})
    t = ts(job, 2600)
    job.interleave({r: watchdog_block(job, r, t, 1502) for r in range(16) if r != 6})
    job.prefix = lambda r: ""
    for line in loggen.MPIRUN_ABORTED + loggen.mpirun_first_failure("[[41752,1],6]", 1):
        job.raw(line)
    return job


def scenario_smp_host_oom() -> Job:
    hosts = ["algo-1", "algo-2"]
    job = make_job(105, hosts, 8, "smp")
    for h in hosts:
        job.raw(f"{h}: 2024-03-02 11:22:40,118 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training")
        job.raw(f"{h}: 2024-03-02 11:22:43,201 sagemaker-training-toolkit INFO     Invoking user script")
    job.raw("algo-1: 2024-03-02 11:22:43,311 sagemaker-training-toolkit INFO     Starting MPI run as worker node.")
    healthy_run(job, 0, 130, iface="eth0")
    job.raw("algo-2: [1,mpirank:11,algo-2]<stderr>:  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py\", line 1328, in _next_data")
    job.raw("algo-2: --------------------------------------------------------------------------")
    job.raw("algo-2: mpirun noticed that process rank 11 with PID 0 on node algo-2 exited on signal 9 (Killed).")
    job.raw("algo-2: --------------------------------------------------------------------------")
    job.interleave({r: remote_error_block(r, "10.0.148.23") for r in range(16) if r != 11})
    job.raw("algo-1: 2024-03-02 14:03:12,552 sagemaker-training-toolkit ERROR    Reporting training FAILURE")
    job.raw("algo-1: 2024-03-02 14:03:12,552 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:")
    job.raw("algo-1: ExitCode 137")
    job.raw('algo-1: ErrorMessage ""')
    job.raw('algo-1: Command "mpirun --host algo-1:8,algo-2:8 -np 16 --allow-run-as-root --tag-output --oversubscribe -mca btl_tcp_if_include eth0 -x NCCL_DEBUG=INFO smddpmprun -i 1 --allow-bypass /opt/conda/bin/python3.10 -m mpi4py train_gpt.py"')
    return job


def scenario_shm_sagemaker_torchrun() -> Job:
    hosts = ["algo-1", "algo-2"]
    job = make_job(106, hosts, 8, "host-default")
    for h in hosts:
        job.raw(f"{h}: 2024-06-11 08:02:17,004 sagemaker-training-toolkit INFO     Invoking script with the following command:")
        job.raw(f"{h}: torchrun --nnodes 2 --nproc_per_node 8 --master_addr algo-1 --master_port 7777 --node_rank {hosts.index(h)} train.py --epochs 3")
    healthy_run(job, 0, 150, iface="eth0")
    job.interleave({11: loggen.dataloader_bus_error(PY, 1132, 3216)})
    t = ts(job, 2900)
    job.interleave({r: watchdog_block(job, r, t, 30551) for r in range(16) if r != 11})
    job.prefix = lambda r: f"{hosts[r // 8]}: "
    torchrun_summaries(job, t, {"algo-2": (11, 1, loggen.TRACEBACK_HINT)})
    return job


def scenario_deepspeed_loss_scale() -> Job:
    hosts = ["worker-0", "worker-1", "worker-2", "worker-3"]
    job = make_job(107, hosts, 8, "host")
    for h in hosts:
        job.raw(f"{h}: [2023-07-20 09:58:11,118] [INFO] [launch.py:145:main] WORLD INFO DICT: {{'worker-0': [0, 1, 2, 3, 4, 5, 6, 7], 'worker-1': [0, 1, 2, 3, 4, 5, 6, 7], 'worker-2': [0, 1, 2, 3, 4, 5, 6, 7], 'worker-3': [0, 1, 2, 3, 4, 5, 6, 7]}}")
        job.raw(f"{h}: [2023-07-20 09:58:11,118] [INFO] [launch.py:163:main] dist_world_size=32")
    nccl_init(job)
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:960:print] DeepSpeedEngine configuration:")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   fp16_enabled ................. True")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   initial_dynamic_scale ........ 65536")
    scale = 65536
    for step in range(1, 170):
        if step % 9 == 0 and scale > 1:
            job.emit(0, f"[2023-07-20 10:{step // 60 % 60:02d}:{step % 60:02d},118] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {scale}, reducing to {scale // 2}")
            scale //= 2
        job.emit(0, f"[2023-07-20 10:{step // 60 % 60:02d}:{step % 60:02d},771] [INFO] [logging.py:96:log_dist] [Rank 0] step={step * 10}, skipped={step // 9}, lr=[1.9999e-05], mom=[(0.9, 0.999)]")
        if step % 5 == 0:
            job.emit(0, f"{{'loss': {job.rng.uniform(1.2, 2.8):.4f}, 'learning_rate': 1.9999e-05, 'epoch': {step / 1000:.2f}}}")
    for _ in range(6):
        job.emit(0, "[2023-07-20 12:48:40,006] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, but hysteresis is 2. Reducing hysteresis to 1")
    job.interleave({r: [
        "Traceback (most recent call last):",
        '  File "/home/ubuntu/ziya/train.py", line 311, in <module>',
        "    trainer.train()",
        f'  File "{PY}/deepspeed/runtime/fp16/fused_optimizer.py", line 276, in step',
        "    self._update_scale(self.overflow)",
        f'  File "{PY}/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale',
        "    raise Exception(",
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ] for r in range(0, 32, 3)})
    for h in hosts:
        job.raw(f"{h}: [2023-07-20 12:48:52,338] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 41023")
        job.raw(f"{h}: [2023-07-20 12:48:52,911] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=7', '--deepspeed', 'ds_config.json'] exits with return code = 1")
    job.raw("pdsh@worker-0: worker-1: ssh exited with exit code 1")
    return job


def scenario_duplicate_gpu() -> Job:
    hosts = ["gpu-a-01", "gpu-a-02"]
    job = make_job(108, hosts, 4, "host")
    for h in hosts:
        job.raw(f"{h}: W0115 09:12:01.000000 140211 torch/distributed/run.py:779] {loggen.OMP_THREADS_WARNING}")
    nccl_init(job, ranks=iter(range(0, 4)))
    per_rank: dict[int, list[str]] = {}
    for r in range(4, 8):
        per_rank[r] = [
            f"gpu-a-02:{30000 + r}:{30400 + r} [0] init.cc:871 NCCL WARN Duplicate GPU detected : rank {r} and rank 4 both on CUDA device 1000",
            f"gpu-a-02:{30000 + r}:{30400 + r} [0] NCCL INFO init.cc:1501 -> 5",
            "Traceback (most recent call last):",
            '  File "/run/megatron/initialize.py", line 156, in _compile_dependencies',
            "    torch.distributed.barrier()",
            f'  File "{PY}/torch/distributed/distributed_c10d.py", line 3744, in barrier',
            "    work = default_pg.barrier(opts=opts)",
            "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
            "Last error:",
            f"Duplicate GPU detected : rank {r} and rank 4 both on CUDA device 1000",
        ]
    per_rank[4] = per_rank[5][:2] + per_rank[5][2:]
    job.interleave(per_rank)
    job.interleave({r: remote_error_block(r, "10.18.1.11") for r in range(0, 4)})
    t = ts(job, 120)
    torchrun_summaries(job, t, {"gpu-a-02": (4, 1, loggen.TRACEBACK_HINT), "gpu-a-01": (0, 1, loggen.TRACEBACK_HINT)})
    # pad with the second attempt's healthy banner lines the user also pasted
    while len(job.lines) < 320:
        job.raw(f"gpu-a-01: {PY}/torch/distributed/distributed_c10d.py:3890: UserWarning: No device id is provided via `init_process_group` or `barrier `. Using the current device set by the user.")
        job.raw("gpu-a-01:   warnings.warn(  # warn only once")
    return job


def scenario_master_port() -> Job:
    """A stale process from the previous job still holds 29500 on node 0.

    Node 0's agent cannot bind; the other agents reach the stale listener, which never answers,
    so their store reads time out. One agent per node, so the job script's own environment and
    package dumps make up most of the file, as they do in real sbatch output.
    """
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(4)]
    job = make_job(109, hosts, 8, "label-ts")
    packages = ["accelerate 0.29.3", "apex 0.1", "datasets 2.18.0", "deepspeed 0.14.0", "einops 0.7.0",
                "flash-attn 2.5.7", "megatron-core 0.6.0", "nltk 3.8.1", "numpy 1.26.4", "pybind11 2.12.0",
                "regex 2023.12.25", "sentencepiece 0.2.0", "tokenizers 0.15.2", "torch 2.3.0", "transformer-engine 1.5.0",
                "transformers 4.40.1", "triton 2.3.0", "wandb 0.16.6", "aiohttp 3.9.5", "certifi 2024.2.2",
                "filelock 3.13.4", "fsspec 2024.3.1", "huggingface-hub 0.22.2", "idna 3.7", "Jinja2 3.1.3",
                "MarkupSafe 2.1.5", "mpmath 1.3.0", "networkx 3.3", "ninja 1.11.1.1", "nvidia-nccl-cu12 2.20.5",
                "packaging 24.0", "pandas 2.2.2", "protobuf 4.25.3", "psutil 5.9.8", "pyarrow 16.0.0",
                "PyYAML 6.0.1", "requests 2.31.0", "safetensors 0.4.3", "six 1.16.0", "sympy 1.12", "tqdm 4.66.2",
                "typing_extensions 4.11.0", "urllib3 2.2.1"]
    env = [f"SLURM_{k}" for k in ("JOB_ID=4471300", "JOB_NAME=pretrain_13b", "JOB_NUM_NODES=4", "NODELIST=slurm0-a3-ghpc-[0-3]",
                                  "NTASKS_PER_NODE=1", "CPUS_PER_TASK=208", "GPUS_ON_NODE=8", "SUBMIT_DIR=/storage3/jobs")]
    env += ["MASTER_ADDR=slurm0-a3-ghpc-0", "MASTER_PORT=29500", "NCCL_IB_TIMEOUT=22", "NCCL_DEBUG=WARN",
            "CUDA_DEVICE_MAX_CONNECTIONS=1", "TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "OMP_NUM_THREADS=1"]
    for node in range(4):
        r = node * 8
        job.emit(r, "+ hostname")
        job.emit(r, hosts[node])
        for g in range(8):
            job.emit(r, f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{node:02x}{g:02x}5f1d-8c7e-1b0a-9e55-0b1d6c1f3a{g:02x})")
        for line in env:
            job.emit(r, line)
        job.emit(r, f"SLURM_NODEID={node}")
        job.emit(r, "Package                  Version")
        job.emit(r, "------------------------ ----------")
        for pkg in packages:
            name, version = pkg.split()
            job.emit(r, f"{name:<24} {version}")
        job.emit(r, "+ torchrun --nnodes 4 --nproc_per_node 8 --node_rank $SLURM_NODEID --master_addr slurm0-a3-ghpc-0 "
                    "--master_port 29500 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1")
        job.emit(r, f"W0512 07:00:01.000000 140211 torch/distributed/run.py:779] {loggen.OMP_THREADS_WARNING}")
    job.interleave({0: [
        "Traceback (most recent call last):",
        '  File "/storage3/miniconda3/envs/.cuda12/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        f'  File "{PY}/torch/distributed/run.py", line 879, in main',
        "    run(args)",
        f'  File "{PY}/torch/distributed/launcher/api.py", line 250, in launch_agent',
        "    result = agent.run()",
        f'  File "{PY}/torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py", line 55, in next_rendezvous',
        "    self._store = TCPStore(  # type: ignore[call-arg]",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
    ]})
    job.raw("srun: error: slurm0-a3-ghpc-0: task 0: Exited with exit code 1")
    job.skew_s = 900.0
    for node in (1, 2, 3):
        job.interleave({node * 8: [
            "Traceback (most recent call last):",
            '  File "/storage3/miniconda3/envs/.cuda12/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            f'  File "{PY}/torch/distributed/launcher/api.py", line 254, in launch_agent',
            "    result = agent.run()",
            f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 733, in run',
            "    result = self._invoke_run(role)",
            f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 870, in _invoke_run',
            "    self._initialize_workers(self._worker_group)",
            f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 554, in _rendezvous',
            "    rdzv_info = spec.rdzv_handler.next_rendezvous()",
            f'  File "{PY}/torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py", line 55, in next_rendezvous',
            "    self._store = TCPStore(  # type: ignore[call-arg]",
            "torch.distributed.DistStoreError: Socket Timeout",
        ]})
    for node in (1, 2, 3):
        job.raw(f"srun: error: slurm0-a3-ghpc-{node}: task {node}: Exited with exit code 1")
    return job


def scenario_unhandled_cuda() -> Job:
    hosts = ["h100-7", "h100-8"]
    job = make_job(110, hosts, 8, "host-rank")
    healthy_run(job, 300, 150)
    job.interleave({14: [
        "Traceback (most recent call last):",
        '  File "/workspace/torchtitan/train.py", line 418, in <module>',
        "    main(config)",
        f'  File "{PY}/torch/distributed/distributed_c10d.py", line 2288, in all_reduce',
        "    work = group.allreduce([tensor], opts)",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 'out of memory'",
    ]})
    job.interleave({r: remote_error_block(r, "10.18.1.17") for r in range(16) if r != 14})
    t = ts(job, 3100)
    job.prefix = lambda r: f"{hosts[r // 8]}: "
    torchrun_summaries(job, t, {"h100-8": (14, 1, loggen.TRACEBACK_HINT)})
    return job


def scenario_watchdog_only() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(4)]
    job = make_job(111, hosts, 8, "label-ts")
    healthy_run(job, 40000, 150)
    job.skew_s = 600.0  # ten silent minutes before the watchdog fires
    t = ts(job, 5400)
    job.interleave({r: watchdog_block(job, r, t, 98211, op="_ALLGATHER_BASE", numel=19008) for r in range(32)})
    torchrun_summaries(job, t)
    return job


def scenario_remote_error_only() -> Job:
    hosts = ["a100-st-p4d24xlarge-21", "a100-st-p4d24xlarge-22"]
    job = make_job(112, hosts, 8, "host")
    healthy_run(job, 7000, 140, iface="ens32")
    warn = []
    for r in range(8, 16):
        tag = f"a100-st-p4d24xlarge-22:{183000 + r}:{183200 + r} [{r % 8}]"
        warn += [
            f"{tag} misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<{58300 + r}> failed : Broken pipe",
            f"{tag} NCCL INFO misc/socket.cc:535 -> 6",
            f"{tag} NCCL INFO transport/net_socket.cc:368 -> 6",
        ]
    job.interleave({8: warn})
    job.interleave({r: remote_error_block(r, "10.200.84.247" if r < 8 else "10.200.80.12") for r in range(16)})
    t = ts(job, 4100)
    job.prefix = lambda r: f"{hosts[r // 8]}: "
    torchrun_summaries(job, t, {h: (i * 8, 1, loggen.TRACEBACK_HINT) for i, h in enumerate(hosts)})
    return job


def scenario_time_limit() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(2)]
    job = make_job(113, hosts, 8, "label")
    healthy_run(job, 0, 260)
    job.raw("slurmstepd: error: *** JOB 1342 ON slurm0-a3-ghpc-0 CANCELLED AT 2024-04-30T21:51:16 DUE TO TIME LIMIT ***")
    job.raw("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    job.raw("slurmstepd: error: *** STEP 1342.0 ON slurm0-a3-ghpc-0 CANCELLED AT 2024-04-30T21:51:16 DUE TO TIME LIMIT ***")
    for r in (0, 8):
        job.emit(r, "W0430 21:51:16.402000 140211 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers")
        for k in range(8):
            job.emit(r, f"W0430 21:51:16.403000 140211 torch/distributed/elastic/multiprocessing/api.py:858] Sending process {925940 + (r + k) * 7} closing signal SIGTERM")
        job.emit(r, "torch.distributed.elastic.multiprocessing.api.SignalException: Process 140211 got signal: 15")
    job.raw("srun: error: slurm0-a3-ghpc-0: task 0: Terminated")
    job.raw("srun: error: slurm0-a3-ghpc-1: task 1: Terminated")
    job.raw("srun: Force Terminated StepId=1342.0")
    return job


def scenario_node_fail() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(8, 12)]
    job = make_job(114, hosts, 8, "host-rank")
    healthy_run(job, 88000, 140)
    t = ts(job, 6000)
    job.interleave({r: watchdog_block(job, r, t, 171002)[:6] for r in range(32) if r // 8 != 3})
    job.raw("srun: error: Node failure on slurm0-a3-ghpc-11")
    job.raw("slurmstepd: error: *** STEP 88231.0 ON slurm0-a3-ghpc-8 CANCELLED AT 2024-05-02T03:11:52 DUE TO NODE FAILURE ***")
    job.raw("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    job.raw("slurmstepd: error: *** JOB 88231 ON slurm0-a3-ghpc-8 CANCELLED AT 2024-05-02T03:11:52 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***")
    return job


def scenario_fallen_off_bus() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(2)]
    job = make_job(115, hosts, 8, "host-rank")
    healthy_run(job, 12000, 140)
    job.interleave({9: cuda_error_block("unspecified launch failure")})
    t = ts(job, 3300)
    job.interleave({r: watchdog_block(job, r, t, 40112) for r in range(16) if r != 9})
    job.prefix = lambda r: f"{hosts[r // 8]}: "
    torchrun_summaries(job, t, {hosts[1]: (9, 1, loggen.TRACEBACK_HINT)})
    job.raw("")
    job.raw("--- sudo dmesg -T on slurm0-a3-ghpc-1 (pasted by the admin) ---")
    job.raw("[Sun Apr 28 23:02:41 2024] NVRM: GPU at PCI:0000:44:00: GPU-5f1d8d32-8c7e-1b0a-9e55-0b1d6c1f3a77")
    job.raw("[Sun Apr 28 23:02:41 2024] NVRM: Xid (PCI:0000:44:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    job.raw("[Sun Apr 28 23:02:41 2024] NVRM: GPU 0000:44:00.0: GPU has fallen off the bus.")
    job.raw("[Sun Apr 28 23:02:41 2024] NVRM: A GPU crash dump has been created. If possible, please run")
    job.raw("[Sun Apr 28 23:02:41 2024] NVRM: nvidia-bug-report.sh as root to collect this data before")
    return job


SCENARIOS: dict[str, tuple[Callable[[], Job], str]] = {
    "oom_rank3_slurm_host_rank.log": (scenario_oom_rank3, "OOM text: https://github.com/lllyasviel/FramePack/issues/369 ; watchdog text and prefixes: seed 003 runbook, https://github.com/hiyouga/LlamaFactory/issues/7396"),
    "illegal_memory_rank5_default_prefix.log": (scenario_illegal_memory_default, "https://github.com/InternLM/lmdeploy/issues/3258 ; ncclRemoteError: https://github.com/NVIDIA/nccl/issues/2076"),
    "ecc_rank12_srun_label.log": (scenario_ecc_label, "https://github.com/zai-org/ChatGLM3/issues/681 ; watchdog: https://github.com/XPixelGroup/BasicSR/issues/737"),
    "device_assert_rank6_mpirun.log": (scenario_dsa_mpi, "https://github.com/deepspeedai/Megatron-DeepSpeed/issues/207 ; prefixes: https://github.com/horovod/horovod/issues/3929"),
    "host_oom_rank11_sagemaker_smp.log": (scenario_smp_host_oom, "exit 137 / mpirun signal 9 ; FailureReason shape https://github.com/aws/sagemaker-python-sdk/issues/1225 ; ncclRemoteError https://github.com/NVIDIA/nccl/issues/2076"),
    "shm_bus_error_rank11_sagemaker_torchrun.log": (scenario_shm_sagemaker_torchrun, "https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/16 ; SageMaker startup lines https://github.com/huggingface/notebooks/issues/136"),
    "deepspeed_loss_scale_min_pdsh.log": (scenario_deepspeed_loss_scale, "https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/534 ; https://github.com/yangjianxin1/Firefly/issues/68"),
    "duplicate_gpu_node2.log": (scenario_duplicate_gpu, "https://github.com/NVIDIA/Megatron-LM/issues/661 ; https://github.com/horovod/horovod/issues/3929"),
    "master_port_in_use_node0.log": (scenario_master_port, "https://github.com/modelscope/ms-swift/issues/3988 ; https://github.com/Liuziyu77/Visual-RFT/issues/123"),
    "nccl_unhandled_cuda_rank14.log": (scenario_unhandled_cuda, "https://github.com/NVIDIA/nccl/issues/1410 ; https://github.com/NVIDIA/nccl/issues/2076"),
    "watchdog_only_no_root_cause.log": (scenario_watchdog_only, "https://github.com/sgl-project/sglang/issues/1693 ; seed 003 runbook"),
    "remote_error_only_network.log": (scenario_remote_error_only, "https://github.com/NVIDIA/nccl/issues/795 ; https://github.com/NVIDIA/nccl/issues/2076"),
    "slurm_time_limit_srun_label.log": (scenario_time_limit, "https://github.com/ZettaAI/zetta_utils/issues/671 ; https://github.com/desihub/desitarget/issues/628"),
    "slurm_node_fail_watchdog.log": (scenario_node_fail, "slurm NODE_FAIL messages (https://github.com/snakemake/snakemake-executor-plugin-slurm/pull/411) ; watchdog: seed 003"),
    "gpu_fallen_off_bus_rank9.log": (scenario_fallen_off_bus, "https://github.com/pop-os/pop/issues/3363 ; https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151"),
}


# ---------------------------------------------------------------- clean runs (tests/clean/)


def clean_torchrun_single_node() -> Job:
    job = make_job(201, ["gpu-node-17"], 8, "default")
    healthy_run(job, 0, 320)
    job.emit(0, "[after training is done] datetime: 2024-04-29 09:12:40")
    job.emit(0, "saving checkpoint at iteration     3200 to /storage3/ckpt/1b in torch format")
    job.emit(0, "  successfully saved checkpoint from iteration     3200 to /storage3/ckpt/1b")
    for r in range(8):
        job.emit(r, (
            f"[rank{r}]:[W429 09:12:44.331417092 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
            "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
            "destroy_process_group to ensure that any pending NCCL operations have finished in this process. "
            "In rare cases this process can exit before this point and block the progress of another member of the "
            "process group. This constraint has always been present,  but this warning has only been added since "
            "PyTorch 2.4 (function operator())"
        ))
    return job


def clean_slurm_megatron() -> Job:
    hosts = [f"slurm0-a3-ghpc-{i}" for i in range(4)]
    job = make_job(202, hosts, 8, "label")
    job.raw("+ export NCCL_DEBUG=INFO NCCL_IB_TIMEOUT=22 TORCH_NCCL_ASYNC_ERROR_HANDLING=1")
    job.raw("+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    job.raw("+ srun --label --ntasks-per-node=1 torchrun --nnodes 4 --nproc_per_node 8 --rdzv_backend c10d "
            "--rdzv_endpoint slurm0-a3-ghpc-0:29500 pretrain_gpt.py --micro-batch-size 1 --global-batch-size 1024")
    healthy_run(job, 1000, 330)
    job.emit(31, "[after training is done] datetime: 2024-04-30 19:02:11")
    job.emit(0, "saving checkpoint at iteration     4310 to /storage3/ckpt/13b in torch format")
    job.emit(0, "  successfully saved checkpoint from iteration     4310 to /storage3/ckpt/13b")
    job.raw("JOB 1342 finished: exit 0, elapsed 21:11:09")
    return job


def clean_sagemaker_torchrun() -> Job:
    hosts = ["algo-1", "algo-2"]
    job = make_job(203, hosts, 8, "host-default")
    for h in hosts:
        job.raw(f"{h}: 2024-06-11 08:02:12,118 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training")
        job.raw(f"{h}: 2024-06-11 08:02:12,140 sagemaker_pytorch_container.training INFO     Block until all host DNS lookups succeed.")
        job.raw(f"{h}: 2024-06-11 08:02:15,201 sagemaker_pytorch_container.training INFO     Invoking user training script.")
        job.raw(f"{h}: 2024-06-11 08:02:17,004 sagemaker-training-toolkit INFO     Invoking script with the following command:")
        job.raw(f"{h}: torchrun --nnodes 2 --nproc_per_node 8 --master_addr algo-1 --master_port 7777 "
                f"--node_rank {hosts.index(h)} train.py --epochs 3")
    healthy_run(job, 0, 300, iface="eth0")
    for h in hosts:
        job.raw(f"{h}: 2024-06-11 11:40:02,719 sagemaker-training-toolkit INFO     Waiting for the process to finish and give a return code.")
        job.raw(f"{h}: 2024-06-11 11:40:02,719 sagemaker-training-toolkit INFO     Done waiting for a return code. Received 0 from exiting process.")
        job.raw(f"{h}: 2024-06-11 11:40:02,720 sagemaker-training-toolkit INFO     Reporting training SUCCESS")
    job.raw("2024-06-11 11:40:31 Uploading - Uploading generated training model")
    job.raw("2024-06-11 11:41:02 Completed - Training job completed")
    job.raw("Training seconds: 26394")
    job.raw("Billable seconds: 26394")
    return job


def clean_deepspeed() -> Job:
    hosts = ["worker-0", "worker-1"]
    job = make_job(204, hosts, 8, "host")
    for h in hosts:
        job.raw(f"{h}: [2023-07-20 09:58:11,118] [INFO] [launch.py:145:main] WORLD INFO DICT: "
                "{'worker-0': [0, 1, 2, 3, 4, 5, 6, 7], 'worker-1': [0, 1, 2, 3, 4, 5, 6, 7]}")
        job.raw(f"{h}: [2023-07-20 09:58:11,118] [INFO] [launch.py:163:main] dist_world_size=16")
        job.raw(f"{h}: [2023-07-20 09:58:11,118] [INFO] [launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
    nccl_init(job)
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:960:print] DeepSpeedEngine configuration:")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   bf16_enabled ................. False")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   fp16_enabled ................. True")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   zero_optimization_stage ...... 2")
    job.emit(0, "[2023-07-20 10:00:02,771] [INFO] [config.py:964:print]   initial_dynamic_scale ........ 65536")
    scale = 65536
    for step in range(1, 330):
        if step in (1, 2, 3, 40) and scale > 4096:
            job.emit(0, f"[2023-07-20 10:00:{step % 60:02d},118] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
                        f"OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {scale}, reducing to {scale // 2}")
            scale //= 2
        job.emit(0, f"[2023-07-20 10:{step // 60 % 60:02d}:{step % 60:02d},771] [INFO] [logging.py:96:log_dist] "
                    f"[Rank 0] step={step * 10}, skipped={min(step, 4)}, lr=[1.9999e-05], mom=[(0.9, 0.999)]")
        if step % 5 == 0:
            job.emit(0, f"{{'loss': {2.8 - step * 0.004:.4f}, 'learning_rate': 1.9999e-05, 'epoch': {step / 330:.2f}}}")
    job.emit(0, "{'train_runtime': 19872.4411, 'train_samples_per_second': 26.4, 'train_steps_per_second': 0.166, 'train_loss': 1.7342, 'epoch': 1.0}")
    for h in hosts:
        job.raw(f"{h}: [2023-07-20 15:32:40,906] [INFO] [launch.py:347:main] Process 41023 exits successfully.")
    return job


def clean_sagemaker_smp_efa() -> Job:
    hosts = ["algo-1", "algo-2"]
    job = make_job(205, hosts, 8, "smp")
    for h in hosts:
        job.raw(f"{h}: 2024-03-02 11:22:43,201 sagemaker-training-toolkit INFO     Invoking user script")
    job.raw("algo-1: 2024-03-02 11:22:43,311 sagemaker-training-toolkit INFO     Starting MPI run as worker node.")
    efa = {}
    for r in range(16):
        tag = f"{hosts[r // 8]}:{120 + r}:{190 + r} [{r % 8}]"
        efa[r] = [
            f"{tag} NCCL INFO NET/OFI Using aws-ofi-nccl 1.7.4-aws",
            f"{tag} NCCL INFO NET/OFI Running on p4d.24xlarge platform, Setting NCCL_TOPO_FILE environment variable to "
            "/opt/conda/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml",
            f"{tag} NCCL INFO NET/OFI Setting FI_EFA_FORK_SAFE environment variable to 1",
            f"{tag} NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
            f"{tag} NCCL INFO Using network AWS Libfabric",
        ]
    job.interleave(efa)
    healthy_run(job, 0, 280, iface="eth0")
    job.raw("algo-1: 2024-03-02 17:01:12,552 sagemaker-training-toolkit INFO     Reporting training SUCCESS")
    return job


CLEAN_SCENARIOS: dict[str, tuple[Callable[[], Job], str]] = {
    "torchrun_ddp_single_node.log": (clean_torchrun_single_node, "healthy torchrun run, [defaultN] prefixes, shutdown warning of torch >= 2.4"),
    "slurm_megatron_4_nodes.log": (clean_slurm_megatron, "healthy Megatron-LM run under srun --label"),
    "sagemaker_torchrun_2_hosts.log": (clean_sagemaker_torchrun, "healthy SageMaker torchrun job; toolkit lines as in https://github.com/huggingface/notebooks/issues/136 and https://github.com/aws/sagemaker-python-sdk/issues/1412"),
    "sagemaker_smp_efa_2_hosts.log": (clean_sagemaker_smp_efa, "healthy SageMaker mpirun job on EFA; OFI lines as in https://github.com/aws/deep-learning-containers/issues/3746"),
    "deepspeed_fp16_pdsh.log": (clean_deepspeed, "healthy DeepSpeed fp16 run with the usual early OVERFLOW skips"),
}


def generate(log_dir: Path = LOG_DIR, clean_dir: Path = CLEAN_DIR) -> list[tuple[Path, int]]:
    """Write every failure log to `log_dir` and every healthy one to `clean_dir`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    clean_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (build, sources) in SCENARIOS.items():
        job = build()
        header = f"source: generated by tests/corpus/make_logs.py; error text from {sources}"
        written.append((job.write(name, header, log_dir), len(job.lines) + 1))
    for name, (build, what) in CLEAN_SCENARIOS.items():
        job = build()
        header = f"source: generated by tests/corpus/make_logs.py ({what}); no failure in it"
        written.append((job.write(name, header, clean_dir), len(job.lines) + 1))
    return written


def main() -> None:
    for path, lines in generate():
        print(f"{path.parent.name}/{path.name}: {lines} lines")


if __name__ == "__main__":
    main()
