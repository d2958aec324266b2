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
    return out
