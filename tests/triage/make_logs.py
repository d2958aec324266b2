"""Multi-rank failure logs for the triage tests, built from the lines PyTorch, NCCL, torchrun and srun print.

Each scenario is a job of N ranks on several hosts: healthy progress, then one failure (a known problem
or a plain bug in user code, on one rank), then the cascade it brings (watchdog timeouts on the other
ranks, aborted communicators, the launcher's SIGTERMs and ChildFailedError, srun's step aborts); or a
hang in which one rank prints nothing while the others time out. Some logs are concatenated host by host,
so the earliest failure by time is not the first by line. Deterministic: the same logs every run.

``scenarios()`` returns ``Scenario`` objects with what a person reading the log would answer: the line
of the first failure, the entry it is (or None for user code), and the ranks that went quiet.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.loggen import work_nccl

START = 1_714_557_600  # 2024-05-01 10:00:00 UTC


@dataclass
class Scenario:
    name: str
    lines: list[str]
    first_line: int | None  # 1-based line of the first failure (the exception line of a traceback)
    entry: str | None  # the knowledge entry the first failure is, None when it is a bug in user code
    silent: list[str] = field(default_factory=list)
    cascade: bool = True

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass
class Job:
    ranks: int
    per_host: int
    style: str  # "host-rank", "rank", "srun"
    clock: str  # "iso", "glog", "none"
    seed: int

    def host(self, rank: int) -> str:
        return f"gpu-{rank // self.per_host + 1:02d}"

    def stamp(self, t: float) -> str:
        s = int(t)
        hh, mm, ss = (s // 3600) % 24, (s // 60) % 60, s % 60
        frac = f"{t - s:.6f}"[1:]
        if self.clock == "iso":
            return f"[2024-05-01 {hh:02d}:{mm:02d}:{ss:02d}{frac[:4]}] "
        if self.clock == "glog":
            return f"I0501 {hh:02d}:{mm:02d}:{ss:02d}{frac} "
        return ""

    def line(self, rank: int, t: float, text: str) -> str:
        if text.startswith("slurmstepd:"):  # printed by the node's SLURM daemon, not by a rank
            return f"{self.stamp(t)}{self.host(rank)}: {text}" if self.style == "host-rank" else f"{self.stamp(t)}{text}"
        if self.style == "host-rank":
            return f"{self.stamp(t)}{self.host(rank)}: [rank{rank}]: {text}"
        if self.style == "srun":
            return f"{self.stamp(t)}{rank}: {text}"
        return f"{self.stamp(t)}[rank{rank}]: {text}"


def _init(job: Job, t: float) -> list[tuple[float, int, str]]:
    out = []
    for r in range(job.ranks):
        out.append((t + r * 0.01, r, f"{job.host(r)}:{4000 + r}:{4100 + r} [{r % job.per_host}] NCCL INFO comm "
                    f"0x55d{r:04x} rank {r} nranks {job.ranks} cudaDev {r % job.per_host} nvmlDev "
                    f"{r % job.per_host} busId {r % job.per_host}0000 commId 0x8f3a - Init COMPLETE"))
    return out


def _progress(job: Job, t: float, steps: int) -> list[tuple[float, int, str]]:
    rng = random.Random(job.seed)
    out = []
    for step in range(steps):
        loss = 3.2 - step * 0.01 + rng.random() * 0.05
        out.append((t + step * 2.0, 0, f"iteration {step + 1:6d} | consumed samples {(step + 1) * 512:9d} | "
                    f"lm loss {loss:.6E} | grad norm {0.8 + rng.random():.3f} | number of skipped iterations 0"))
    out.append((t + 1.0, 1, "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:557: UserWarning: This "
                "DataLoader will create 8 worker processes in total. Our suggested max number of worker in current "
                "system is 6, which is smaller than what this DataLoader is going to create."))
    return out


def _cascade(job: Job, t: float, failed: int, seq: int, op: str = "ALLREDUCE",
             skip: frozenset[int] = frozenset()) -> list[tuple[float, int, str]]:
    out = []
    for r in range(job.ranks):
        if r == failed or r in skip:
            continue
        out.append((t + 600 + r * 0.003, r, f"[E501 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
                    f"operation timeout: {work_nccl(seq, op, 1048576)} ran for 600043 milliseconds before timing out."))
        out.append((t + 600.5 + r * 0.003, r, f"[E501 ProcessGroupNCCL.cpp:1664] [PG 0 Rank {r}] Exception (either an "
                    "error or timeout) detected by watchdog at work: 90211, last enqueued NCCL work: 90211, last "
                    "completed NCCL work: 90210."))
    if failed >= 0:
        out.append((t + 602, 0, f"W0501 torch.distributed.elastic.multiprocessing.api:[default0]:Sending process "
                    f"{52000 + failed} closing signal SIGTERM"))
        out.append((t + 603, 0, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"))
        out.append((t + 603.5, 0, f"srun: error: {job.host(failed)}: task {failed}: Exited with exit code 1"))
    return out


def _traceback(frames: list[tuple[str, int, str, str]], exception: str) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for file, line, func, code in frames:
        out += [f'  File "{file}", line {line}, in {func}', f"    {code}"]
    return [*out, exception]


TRAIN = "/home/alice/llm/train.py"
SITE = "/opt/conda/lib/python3.11/site-packages"


def user_bugs() -> list[tuple[str, list[str]]]:
    """Bugs in user code: no knowledge entry names them (the first failure is the answer by itself)."""
    return [
        ("keyerror-collate", _traceback([(TRAIN, 212, "<module>", "main()"), (TRAIN, 187, "main", "batch = next(it)"),
                                         (f"{SITE}/torch/utils/data/dataloader.py", 631, "__next__", "data = self._next_data()"),
                                         ("/home/alice/llm/data.py", 44, "collate", "labels = [ex['labels'] for ex in batch]")],
                                        "KeyError: 'labels'")),
        ("shape-mismatch", _traceback([(TRAIN, 150, "train_step", "logits = model(batch)"),
                                       (f"{SITE}/torch/nn/modules/module.py", 1751, "_call_impl", "return forward_call(*args, **kwargs)"),
                                       ("/home/alice/llm/model.py", 88, "forward", "return self.proj(h)"),
                                       (f"{SITE}/torch/nn/modules/linear.py", 125, "forward", "return F.linear(input, self.weight, self.bias)")],
                                      "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8192x1024 and 4096x1024)")),
        ("batch-size-mismatch", _traceback([(TRAIN, 160, "train_step", "loss = criterion(logits, target)"),
                                            (f"{SITE}/torch/nn/functional.py", 3494, "cross_entropy", "return torch._C._nn.cross_entropy_loss(")],
                                           "ValueError: Expected input batch_size (16) to match target batch_size (8).")),
        ("missing-shard", _traceback([(TRAIN, 98, "build_dataset", "ds = load_shards(cfg.data_path)"),
                                      ("/home/alice/llm/data.py", 17, "load_shards", "return [np.load(p) for p in paths]"),
                                      (f"{SITE}/numpy/lib/npyio.py", 427, "load", "fid = stack.enter_context(open(os_fspath(file), \"rb\"))")],
                                     "FileNotFoundError: [Errno 2] No such file or directory: '/data/tokens/shard-00412.npy'")),
        ("index-error-sampler", _traceback([(TRAIN, 201, "main", "for step, batch in enumerate(loader):"),
                                            ("/home/alice/llm/sampler.py", 61, "__iter__", "yield self.buckets[i][j]")],
                                           "IndexError: list index out of range")),
        ("assertion-seq-len", _traceback([(TRAIN, 141, "train_step", "assert batch.shape[1] <= cfg.seq_len, batch.shape")],
                                         "AssertionError: torch.Size([4, 8193])")),
        ("zero-division-lr", _traceback([(TRAIN, 77, "lr_at", "return base_lr * step / warmup_steps")],
                                        "ZeroDivisionError: division by zero")),
        ("type-error-config", _traceback([(TRAIN, 52, "build_optimizer", "return AdamW(params, lr=cfg.lr, betas=cfg.betas)"),
                                          (f"{SITE}/torch/optim/adamw.py", 58, "__init__", "if not 0.0 <= betas[0] < 1.0:")],
                                         "TypeError: '<=' not supported between instances of 'float' and 'str'")),
        ("attribute-error-ckpt", _traceback([(TRAIN, 233, "save", "torch.save(model.module.state_dict(), path)")],
                                            "AttributeError: 'LlamaForCausalLM' object has no attribute 'module'")),
    ]


def known_failures() -> list[tuple[str, str, list[str]]]:
    """Failures a knowledge entry names: (name, entry id, lines)."""
    return [
        ("cuda-oom", "cuda-oom", _traceback([(TRAIN, 150, "train_step", "loss.backward()")],
                                            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                                            "GPU 3 has a total capacity of 79.15 GiB of which 1.02 GiB is free.")),
        ("device-assert", "cuda-device-side-assert",
         ["RuntimeError: CUDA error: device-side assert triggered",
          "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
          "might be incorrect."]),
        ("illegal-access", "cuda-illegal-memory-access",
         ["RuntimeError: CUDA error: an illegal memory access was encountered",
          "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]),
    ]


def _assemble(job: Job, events: list[tuple[float, int, str]], by_host: bool) -> list[tuple[float, int, str]]:
    """In time order, or host by host (each host's lines in time order, hosts in reverse) as when
    per-node logs are concatenated."""
    ordered = sorted(events, key=lambda e: (e[0], e[1]))
    if not by_host:
        return ordered
    hosts = sorted({job.host(r) for _, r, _ in ordered}, reverse=True)
    return [e for h in hosts for e in ordered if job.host(e[1]) == h]


def _scenario(name: str, job: Job, failure: list[str], failed: int, entry: str | None, *, by_host: bool = False
              ) -> Scenario:
    t0 = START + 36_000.0
    events = _init(job, t0) + _progress(job, t0 + 10, 300)
    t_fail = t0 + 700
    # The failure's line is a traceback's exception line (its last), or the error line itself (its first).
    marker = len(failure) - 1 if failure[0].startswith("Traceback") else 0
    failure_events = [(t_fail + i * 0.0001, failed, line) for i, line in enumerate(failure)]
    events += failure_events + _cascade(job, t_fail, failed, seq=90211)
    assembled = _assemble(job, events, by_host)
    lines = [job.line(r, t, text) for t, r, text in assembled]
    first = assembled.index(failure_events[marker]) + 1
    return Scenario(name, lines, first, entry)


def _two(name: str, job: Job, first: tuple[int, list[str]], then: tuple[int, list[str]], gap: float,
         entry: str, *, by_host: bool) -> Scenario:
    """Two failures ``gap`` seconds apart on two ranks (the first is the answer), the watchdog cascade
    after the first; in time order or host by host."""
    t0 = START + 36_000.0
    events = _init(job, t0) + _progress(job, t0 + 10, 300)
    t_fail = t0 + 700
    placed = []
    for t, (rank, lines) in ((t_fail, first), (t_fail + gap, then)):
        placed.append([(t + i * 0.0001, rank, line) for i, line in enumerate(lines)])
        events += placed[-1]
    events += _cascade(job, t_fail, first[0], seq=90211)
    assembled = _assemble(job, events, by_host)
    failure = placed[0]
    marker = next((i for i, (_t, _r, line) in enumerate(failure) if line.startswith("torch.")), len(failure) - 1) \
        if failure[0][2].startswith("Traceback") else 0
    return Scenario(name, [job.line(r, t, text) for t, r, text in assembled], assembled.index(failure[marker]) + 1, entry)


TIME_LIMIT = "slurmstepd: error: *** JOB 4512 ON {host} CANCELLED AT 2024-05-01T{hh:02d}:{mm:02d}:{ss:02d} DUE TO TIME LIMIT ***"
NCCL_CUDA = _traceback([(TRAIN, 150, "train_step", "dist.all_reduce(loss)"),
                        (f"{SITE}/torch/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)")],
                       "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
                       "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5") + [
    "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 1 'invalid argument'"]


def two_root_causes() -> list[Scenario]:
    """Logs with a time limit and a CUDA OOM in either order, and an NCCL error with the watchdog cascade
    before or after it in the file: the earliest root cause is the answer, whatever the line order."""
    oom = known_failures()[0][2]
    job = Job(16, 8, "host-rank", "iso", 40)

    def limit(t: float) -> list[str]:
        s = int(t)
        return [TIME_LIMIT.format(host=job.host(0), hh=s // 3600 % 24, mm=s // 60 % 60, ss=s % 60)]

    t_fail = START + 36_700.0
    out = []
    for by_host in (False, True):
        tag = "by-host" if by_host else "in-order"
        # OOM on gpu-01, the job hangs in the collective until its time limit (gpu-01's daemon)
        out.append(_two(f"oom-then-time-limit-{tag}", job, (5, oom), (0, limit(t_fail + 1800)), 1800, "cuda-oom",
                        by_host=by_host))
        # the time limit first; the emergency checkpoint on SIGTERM then runs out of memory on gpu-02,
        # whose lines come first when the hosts' logs are concatenated in reverse
        out.append(_two(f"time-limit-then-oom-{tag}", job, (0, limit(t_fail)), (13, oom), 30, "slurm-time-limit",
                        by_host=by_host))
        out.append(_two(f"nccl-error-then-watchdogs-{tag}", job, (5, NCCL_CUDA), (5, []), 0,
                        "nccl-unhandled-cuda-error", by_host=by_host))
    bare = Job(16, 8, "host-rank", "none", 41)  # no timestamps: the watchdogs of gpu-02 come first by line
    out.append(_two("nccl-error-after-watchdogs-no-clock", bare, (5, NCCL_CUDA), (5, []), 0,
                    "nccl-unhandled-cuda-error", by_host=True))
    return out


def _hang(name: str, job: Job, silent: list[int], by_host: bool = False) -> Scenario:
    t0 = START + 36_000.0
    events = _init(job, t0) + _progress(job, t0 + 10, 300)
    events += _cascade(job, t0 + 700, -1, seq=90211, skip=frozenset(silent))
    lines = [job.line(r, t, text) for t, r, text in _assemble(job, events, by_host)]
    first = next(i for i, line in enumerate(lines, 1) if "Watchdog caught" in line)
    return Scenario(name, lines, first, "nccl-watchdog-timeout", [str(r) for r in silent])


def chained_bug() -> list[str]:
    """A bug raised while handling another exception: the chain's last exception is what the job died of."""
    first = _traceback([(f"{SITE}/xarray/backends/file_manager.py", 211, "_acquire_with_cache_info",
                         "file = self._cache[self._key]")], "KeyError: [<class 'netCDF4._netCDF4.Dataset'>, "
                       "('/scratch/alice/out/run_0016_output.nc',), 'a']")
    last = _traceback([("/home/alice/llm/infer.py", 1470, "<module>", "ds.to_netcdf(path, mode='a')"),
                       (f"{SITE}/xarray/backends/file_manager.py", 217, "_acquire_with_cache_info",
                        "file = self._opener(*self._args, **kwargs)")],
                      "PermissionError: [Errno 13] Permission denied: '/scratch/alice/out/run_0016_output.nc'")
    return [*first, "", "During handling of the above exception, another exception occurred:", "", *last]


def _hang_no_watchdog(name: str, job: Job, silent: list[int]) -> Scenario:
    """A job that hangs with no watchdog at all (srun -l, no timestamps) until the scheduler's time limit:
    each trial every rank prints its steps; in the last one the silent ranks never start. No line states
    the world size."""
    lines: list[str] = []
    rng = random.Random(job.seed)
    for trial in range(1, 4):
        lines.append(f"trial {trial}...")
        for step in range(1, 11):
            order = list(range(job.ranks))
            rng.shuffle(order)
            lines += [job.line(r, 0, f"RANK {r}: running step {step}/10") for r in order]
        lines += [job.line(r, 0, f"RANK {r}: COMPLETE!") for r in range(job.ranks)]
    lines.append("trial 4...")
    lines += [job.line(r, 0, f"RANK {r}: running step 1/10") for r in range(job.ranks) if r not in silent]
    first = len(lines) + 1
    lines.append(job.line(0, 0, "slurmstepd: error: *** STEP 8384637.13 ON nid001044 CANCELLED AT "
                                "2024-05-02T03:58:46 DUE TO TIME LIMIT ***"))
    lines += ["slurmstepd: error: *** JOB 8384637 ON nid001044 CANCELLED AT 2024-05-02T03:58:46 DUE TO TIME LIMIT ***",
              "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
    return Scenario(name, lines, first, "slurm-time-limit", [str(r) for r in silent])


def _gpu_fault_hang(name: str, job: Job, silent: list[int]) -> Scenario:
    """An AMD GPU hangs (the HIP runtime says so, no rank on the line), the launcher aborts, and ten minutes
    later the others' watchdogs fire; the ranks on the hung GPUs print nothing. The world size is stated
    nowhere: the ranks are 0 to the highest any line names."""
    t0 = START + 36_000.0
    events = _progress(job, t0 + 10, 300)
    t_fail = t0 + 700
    fault = [f"HW Exception by GPU node-9 (Agent handle: 0x{0x631351bb5a20 + i * 0x1000:x}) reason :GPU Hang"
             for i in range(len(silent) * 4)]
    events += [(t_fail + i * 0.001, -1, line) for i, line in enumerate([*fault, "Aborted (core dumped)"])]
    events += _cascade(job, t_fail, -1, seq=500045, op="_REDUCE_SCATTER_BASE", skip=frozenset(silent))
    lines = [text if r < 0 else job.line(r, t, text) for t, r, text in _assemble(job, events, False)]
    first = lines.index(fault[0]) + 1
    return Scenario(name, lines, first, None, [str(r) for r in silent])


def _err_before_out(name: str, job: Job, bug: list[str], failed: int) -> Scenario:
    """The job's .err pasted before its .out: srun's exit lines come first in the file, the failure that
    caused them after."""
    exits = [f"srun: error: {job.host(r)}: task {r}: Exited with exit code 1" for r in (failed, (failed + 1) % job.ranks)]
    t0 = START + 36_000.0
    events = _init(job, t0) + _progress(job, t0 + 10, 300)
    failure = [(t0 + 700 + i * 0.0001, failed, line) for i, line in enumerate(bug)]
    out = [job.line(r, t, text) for t, r, text in _assemble(job, events + failure, False)]
    lines = [*exits, "", *out]
    return Scenario(name, lines, lines.index(job.line(failed, failure[-1][0], bug[-1])) + 1, None)


def _cancelled(name: str, job: Job) -> Scenario:
    """Someone scancels a healthy job: srun reports the step aborted a moment before slurmstepd's line."""
    t0 = START + 36_000.0
    lines = [job.line(r, t, text) for t, r, text in _assemble(job, _init(job, t0) + _progress(job, t0 + 10, 300), False)]
    lines.append("srun: Job step aborted: Waiting up to 62 seconds for job step to finish.")
    first = len(lines) + 1
    lines += ["slurmstepd: error: *** STEP 1809620.0 ON gpu-01 CANCELLED AT 2024-05-01T10:12:07 ***",
              "slurmstepd: error: *** JOB 1809620 ON gpu-01 CANCELLED AT 2024-05-01T10:12:07 ***"]
    lines += [f"Killing subprocess {75643 + r}" for r in range(job.ranks)]
    return Scenario(name, lines, first, "slurm-job-stopped-triage")


def _hang_world_from_env(name: str, job: Job, silent: list[int]) -> Scenario:
    """A hang whose silent rank is the highest: only the job script's environment dump states the world."""
    scenario = _hang(name, job, silent)
    env = ["SLURM_JOB_ID=4512", f"SLURM_NNODES={job.ranks // job.per_host}", f"SLURM_NTASKS={job.ranks}",
           f"SLURM_TASKS_PER_NODE={job.per_host}(x{job.ranks // job.per_host})"]
    lines = [*env, *(line for line in scenario.lines if "NCCL INFO comm" not in line)]
    first = next(i for i, line in enumerate(lines, 1) if "Watchdog caught" in line)
    return Scenario(name, lines, first, scenario.entry, scenario.silent)


def scenarios() -> list[Scenario]:
    jobs = [Job(16, 8, "host-rank", "iso", 1), Job(8, 4, "rank", "glog", 2), Job(32, 8, "host-rank", "none", 3),
            Job(4, 2, "srun", "iso", 4)]
    out: list[Scenario] = []
    for i, (name, lines) in enumerate(user_bugs()):
        job = jobs[i % len(jobs)]
        out.append(_scenario(f"user-{name}", job, lines, failed=3 + i % 2, entry=None, by_host=i % 3 == 0 and job.clock != "none"))
    for i, (name, entry, lines) in enumerate(known_failures()):
        job = jobs[(i + 1) % len(jobs)]
        out.append(_scenario(f"known-{name}", job, lines, failed=5 % job.ranks, entry=entry,
                             by_host=i == 0 and job.clock != "none"))
    for i, silent in enumerate(([7], [0], [12], [3, 9], [15])):
        job = Job(16, 4, "host-rank" if i % 2 == 0 else "rank", "iso" if i != 2 else "none", 10 + i)
        out.append(_hang(f"hang-silent-{'-'.join(map(str, silent))}", job, silent, by_host=i == 4))
    for i, (name, lines) in enumerate(user_bugs()[:8]):
        job = Job(64, 8, "host-rank", "iso", 20 + i)
        out.append(_scenario(f"big-{name}", job, lines, failed=37 + i, entry=None, by_host=i % 2 == 1))
    out.append(_scenario("user-chained-permission-error", jobs[1], chained_bug(), failed=2, entry=None))
    out.append(_hang_no_watchdog("hang-no-watchdog-time-limit", Job(32, 4, "srun", "none", 30), [0, 25]))
    out.append(_gpu_fault_hang("hang-gpu-fault-no-world-size", Job(8, 8, "rank", "glog", 31), [0, 5]))
    out.append(_err_before_out("user-err-pasted-before-out", Job(2, 1, "rank", "none", 32), user_bugs()[3][1], 1))
    out.append(_cancelled("cancelled-nothing-failed", Job(16, 8, "srun", "iso", 33)))
    out.append(_hang_world_from_env("hang-silent-highest-world-from-env", Job(16, 4, "rank", "iso", 34), [15]))
    return out
