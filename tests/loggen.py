"""Messages that PyTorch, NCCL and Open MPI print when a multi-rank job fails, for the two log generators
(tests/corpus/make_logs.py and tests/holdout/make_logs.py).

Each function returns one message's lines without a rank prefix; the generator adds the prefixes, hosts,
pids and timestamps that make its logs its own. The wording is the tools' own, as the issues cited in
the logs' `# source:` lines show it, so a change here changes committed logs of both evaluation sets:
their regeneration tests compare them byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

OMP_THREADS_WARNING = (
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
    "being overloaded, please further tune the variable for optimal performance in your application as needed."
)
NCCL_REMOTE_ERROR = (
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
)
TRACEBACK_HINT = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
MPIRUN_ABORTED = [
    "--------------------------------------------------------------------------",
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    "--------------------------------------------------------------------------",
]


def mpirun_first_failure(process: str, exit_code: int) -> list[str]:
    """Open MPI naming the first process that exited non-zero, e.g. `[[41752,1],6]`."""
    return [
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        f"  Process name: {process}",
        f"  Exit code:    {exit_code}",
    ]


def cuda_error(error: str, stop: str = ".") -> list[str]:
    """A CUDA error line and the advice PyTorch prints under it; `stop` ends the CUDA_LAUNCH_BLOCKING
    line, which some releases print without a full stop."""
    return [
        error,
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        f"For debugging consider passing CUDA_LAUNCH_BLOCKING=1{stop}",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ]


def remote_error(where: str, nccl_version: str, last_error: str) -> list[str]:
    """What a rank prints when its NCCL peer died: `where` is the c10d source line, `last_error` NCCL's."""
    return [
        f"torch.distributed.DistBackendError: NCCL error in: {where}, remote process exited or there was a network error, NCCL version {nccl_version}",
        NCCL_REMOTE_ERROR,
        "Last error:",
        last_error,
    ]


def work_nccl(seq: int, op: str, numel: int) -> str:
    return f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000)"


def watchdog_timeout(
    rank: int,
    seq: int,
    op: str,
    numel: int,
    *,
    ran_for_ms: int,
    last_enqueued: int,
    stamps: Sequence[str],
    tag: str,
) -> list[str]:
    """The five lines of ProcessGroupNCCL's watchdog giving up on a collective.

    `stamps` are the c10 stamps of the five lines (`E0428 22:05:11.123456789`); `tag` is what torch puts
    before them (`[rankN]:` since 2.2, or nothing when the launcher's prefix already names the rank).
    """
    return [
        f"{tag}[{stamps[0]} ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: {work_nccl(seq, op, numel)} ran for {ran_for_ms} milliseconds before timing out.",
        f"{tag}[{stamps[1]} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {rank}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {last_enqueued}, last completed NCCL work: {seq - 1}.",
        f"{tag}[{stamps[2]} ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank {rank}] Timeout at NCCL work: {seq}, last enqueued NCCL work: {last_enqueued}, last completed NCCL work: {seq - 1}.",
        f"{tag}[{stamps[3]} ProcessGroupNCCL.cpp:621] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        f"{tag}[{stamps[4]} ProcessGroupNCCL.cpp:627] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
    ]


def dataloader_bus_error(site_packages: str, dataloader_line: int, worker_pid: int) -> list[str]:
    """A DataLoader worker killed by SIGBUS because /dev/shm is too small."""
    return [
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "Traceback (most recent call last):",
        f'  File "{site_packages}/torch/utils/data/dataloader.py", line {dataloader_line}, in _try_get_data',
        "    data = self._data_queue.get(timeout=timeout)",
        f'  File "{site_packages}/torch/utils/data/_utils/signal_handling.py", line 66, in handler',
        "    _error_if_any_worker_fails()",
        f"RuntimeError: DataLoader worker (pid {worker_pid}) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
    ]


@dataclass(frozen=True)
class Torchrun:
    """An installed torchrun, as the top frames of its ChildFailedError traceback show it."""

    path: str  # the console script, e.g. /opt/conda/bin/torchrun
    line: int  # the line of the console script that calls torchrun's main
    call: str  # that line
    site_packages: str


@dataclass(frozen=True)
class Failure:
    """One failed worker in torchrun's summary."""

    rank: int
    local_rank: int
    exitcode: int
    pid: int
    traceback: str = TRACEBACK_HINT


def child_failed_error(
    torchrun: Torchrun, script: str, host: str, time: str, failures: Sequence[Failure]
) -> list[str]:
    """torchrun's ChildFailedError summary; `failures[0]` is the root cause, `time` as torchrun prints it."""

    def entry(index: int, failure: Failure) -> list[str]:
        return [
            f"[{index}]:",
            f"  time      : {time}",
            f"  host      : {host}",
            f"  rank      : {failure.rank} (local_rank: {failure.local_rank})",
            f"  exitcode  : {failure.exitcode} (pid: {failure.pid})",
            "  error_file: <N/A>",
            f"  traceback : {failure.traceback}",
        ]

    site = torchrun.site_packages
    lines = [
        "Traceback (most recent call last):",
        f'  File "{torchrun.path}", line {torchrun.line}, in <module>',
        f"    {torchrun.call}",
        f'  File "{site}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 347, in wrapper',
        "    return f(*args, **kwargs)",
        f'  File "{site}/torch/distributed/run.py", line 879, in main',
        "    run(args)",
        f'  File "{site}/torch/distributed/launcher/api.py", line 263, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        f"{script} FAILED",
        "------------------------------------------------------------",
        "Failures:",
    ]
    if len(failures) == 1:
        lines.append("  <NO_OTHER_FAILURES>")
    for index, failure in enumerate(failures[1:], start=1):
        lines += entry(index, failure)
    lines += [
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
    ]
    lines += entry(0, failures[0])
    lines.append("============================================================")
    return lines
