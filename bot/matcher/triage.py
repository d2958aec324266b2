"""Log triage: the first failure in a log, known or not, the cascade after it, and the ranks that went quiet.

When a 64-rank job dies, hundreds of lines say so; one of them is where it started. The triager reads
the lines the matcher reads (every line of a paste, the candidate lines of a large log), one at a time
and in bounded memory, and sorts what failed into three kinds:

- **failures**: a Python exception (the last line of a traceback, or of a chain of them, with the
  innermost frame in the user's own code), a C++ ``terminate called``, a CUDA, NCCL or GPU-hardware
  error, a signal or a kill, a ``FATAL`` line, a line logged at error severity before any consequence;
- **process exits** that do not say why (srun's task exits, ``Aborted (core dumped)``, a step cancelled
  with no reason): consequences while a failure exists, else the first sign of trouble;
- **cascade**: what a failure on another rank brings about (watchdog timeouts, aborted communicators,
  the launcher's SIGTERMs and ChildFailedError, srun's step aborts).

The first failure is the earliest failure by timestamp when the failure lines carry comparable ones
(clocks of several nodes, a log concatenated node by node), else by line; only when there is no failure
is the first process exit or timeout by line the first failure, and the launcher's reactions only when
there is nothing else. Ranks that never printed a failure while their peers timed out in a collective,
or that stopped printing before their peers in a job that hung, are named as silent, the usual culprit
of a hang.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracebot.matcher.normalize import CleanLine, LocalRanks, clean
from tracebot.result import CascadeCount, Diagnosis, FirstFailure

TRIAGE_MIN_LINES = 4  # a text of fewer lines is one error, not a log
MAX_RANKS = 1 << 16
MAX_TRACEBACK_FRAMES = 64
LOG_LINES = 100  # a text this long is a log, whose order of lines is the order of events
# Lines this close to the first failure (in lines, or in seconds) still tell of that failure (a DataLoader
# worker's bus error, then the main process's exception about it), not of its consequences, which take
# a timeout or a teardown to show.
SAME_FAILURE_LINES = 20
SAME_FAILURE_S = 1.0
MESSAGE_LINES = 8  # lines after an exception line that may still be its message

# -- what a line is ----------------------------------------------------------------------------------
_TRACEBACK_START = re.compile(r"^Traceback \(most recent call last\):")
# ... or after other text on its line: a logger's message ("Scheduler hit an exception: Traceback …"), a
# progress bar the traceback was printed over ("0/801 [00:00<?, ?it/s][rank2]: Traceback …")
_TRACEBACK_AFTER = re.compile(r"(?:\[rank(?P<rank>\d+)\]:\s*)?Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_EXCEPTION = re.compile(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Z][\w]*(?:Error|Exception|Interrupt|Exit|Failure|Fault))"
    r"(?::\s*(?P<message>.*))?$"
)
_FAILURE_LINE = re.compile(
    r"terminate called after throwing|Segmentation fault|\bcore dumped\b|\bFATAL\b|CUDA error:|"
    r"\bout of memory\b|Out of memory: Killed process|oom[-_ ]?kill|\bNCCL WARN\b.*\b(?:error|failed)\b|"
    r"\bexited on signal (?:6|7|9|11)\b|Fatal Python error|\bBus error\b|Illegal instruction"
    r"|: line \d+: +\d+ Killed\b"  # a batch script's shell reporting its python killed (OOM killer, SIGKILL)
    r"|NVRM: Xid\b|fallen off the bus|\bNode failure on\b"
    r"|\bHW Exception by GPU\b|\bGPU Hang\b",  # the HIP runtime reporting an AMD GPU fault
    re.IGNORECASE,
)
# A process that ended without saying why: its launcher or shell reports the exit (srun, torchrun, mpirun,
# bash's "Aborted (core dumped)", a scheduler cancelling a step with no reason given). Not the failure
# while a failure that says what went wrong exists (the reason comes before or, in an .err pasted ahead
# of its .out, after it); when none does, the earliest of these and the collective timeouts is.
_ENDED = re.compile(
    r"srun: error: .*tasks? [\d,-]+: (?:Exited|Killed|Aborted)|failed \(exitcode: -?\d+\)"
    r"|exits with return code = -?\d+|mpirun noticed that process rank|\bexited on signal 6\b"
    r"|\bAborted\s+\(core dumped\)|^Aborted$|\*\*\* (?:STEP|JOB) \d+(?:\.\d+)? ON \S+ CANCELLED",
    re.IGNORECASE,
)
# A line logged at warning severity (glog / c10 "W0304 …", "[W304 …", "[W socket.cpp:…]"; Python logging
# "- WARNING -", "WARNING:root:", "[WARNING]", "| WARNING |"; the warnings module's "UserWarning: "). NCCL's
# own "NCCL WARN" is how NCCL reports its errors: not a warning here.
_WARNING_LEVEL = re.compile(
    r"(?:^|[\s\]:])\[?W\d{3,4} \d{2}:\d{2}:\d{2}|\[W [\w.]+:\d+\]"
    r"|(?:^|[\s\[|])WARN(?:ING)?(?:\]|\s*\||\s+-\s|:[\w.]*:)|\b[A-Z]\w*Warning: |^Warning: "
)
_ANY_LEVEL = re.compile(
    r"(?:^|[\s\]:])\[?[IWEF]\d{3,4} \d{2}:\d{2}:\d{2}|\[[IWEF] [\w.]+:\d+\]"
    r"|(?:^|[\s\[|])(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL)(?:\]|\s*\||\s+-\s|:[\w.]*:)"
)
# a process dying (its own line, never the rest of a message)
_DIES = re.compile(r"\bKilled\b|Segmentation fault|core dumped|Bus error|exited on signal|Illegal instruction",
                   re.IGNORECASE)
_NAMES_A_FAULT = re.compile(r"Segmentation fault|Bus error|Illegal instruction", re.IGNORECASE)
# How a traceback goes on with the exception raised while handling the one before: the chain's last
# exception is the one the program died of.
_CHAIN = re.compile(r"^(?:During handling of the above exception, another exception occurred"
                    r"|The above exception was the direct cause of the following exception):?$")
# A line the program logged at error severity (glog / c10: "E0304 19:44:41", "[E304 19:44:40",
# "[E ProcessGroupNCCL.cpp:475]"; Python logging "- ERROR -", "ERROR:root:", "[ERROR]", loguru "| ERROR |").
# Read on the raw line: the normaliser strips the prefix that carries it. Month 00 is absl's logging
# before it is initialised: TensorFlow's and JAX's import-time noise ("E0000 00:00:1731… cuda_dnn.cc:8310]
# Unable to register cuDNN factory"), printed by healthy jobs.
_ERROR_LEVEL = re.compile(
    r"(?:^|[\s\]:])\[?[EF](?!00)\d{3,4} \d{2}:\d{2}:\d{2}|\[[EF] [\w.]+:\d+\]"
    r"|(?:^|[\s\[|])(?:ERROR|CRITICAL|FATAL)(?:\]|\s*\||\s+-\s|:[\w.]*:)"
)
# A CUDA error a rank reports is that rank's failure even when it comes wrapped in a cascade-looking line
# ("NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered").
_OWN_CUDA_FAILURE = re.compile(
    r"CUDA error: |\bout of memory\b|illegal memory access|device-side assert|uncorrectable ECC", re.IGNORECASE)
# Consequences of a failure elsewhere: never the first failure while a failure exists.
_CASCADE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("watchdog timeout", re.compile(
        r"Watchdog caught collective operation timeout|WorkNCCL\(.*\) ran for \d+ milliseconds before timing"
        r"|Timed out waiting \d+ms for (?:send|recv) operation|ProcessGroupNCCL's watchdog got stuck", re.IGNORECASE)),
    ("aborted communicator", re.compile(
        r"communicator was aborted|NCCL communicator was aborted|Some NCCL operations have failed or timed out"
        r"|To avoid data inconsistency, we are taking the entire process down|ncclRemoteError"
        r"|remote process exited or there was a network error|Connection reset by peer|Connection closed by peer"
        r"|Broken pipe|Connection was likely closed"  # (the peer or the rendezvous store went away)
        # how a process ends when its watchdog gives up (the reason follows on the what(): line)
        r"|terminate called after throwing an instance of 'c10::DistBackendError'", re.IGNORECASE)),
    ("launcher exit", re.compile(
        r"Sending process \d+ closing signal SIG|failed \(exitcode: -?\d+\)|ChildFailedError"
        r"|Root Cause \(first observed failure\)|Killing subprocess|\bSignal \d+ \(SIG\w+\) received by PID"
        r"|srun: error: .*tasks? [\d,-]+: (?:Exited|Terminated|Killed|Aborted)|srun: Job step aborted"
        r"|exits with return code = -?\d+"
        r"|\*\*\* (?:STEP|JOB) \d+(?:\.\d+)? ON \S+ CANCELLED|mpirun noticed that process rank"
        r"|exited on signal 15|Received SIGTERM|SignalException|process group watchdog thread terminated",
        re.IGNORECASE)),
)
CASCADE_KINDS = tuple(name for name, _pattern in _CASCADE)  # what a CascadeCount's kind may be
# The scheduler ending a job for a reason of its own is a failure, not a consequence of one (a step
# cancelled because a task failed is).
_SCHEDULER_END = re.compile(r"CANCELLED AT \S+ DUE TO (?:TIME LIMIT|PREEMPTION|NODE FAIL)", re.IGNORECASE)
_LIBRARY_PATH = re.compile(r"/(?:site|dist)-packages/|/lib/python\d|^<frozen |/torch/|/usr/lib/")

# Other lines a rank prints when its watchdog notices a stuck or failed collective (PyTorch 2.2+): not
# counted as timeouts of their own (each follows a "Watchdog caught" line or stands for one), but the
# rank that printed one did report.
_WATCHDOG_NOTICE = re.compile(
    r"detected by watchdog at work|Timeout at NCCL work|dump signal due to a collective timeout"
    r"|Heartbeat monitor timed out|Terminating the process after attempting to dump debug info"
    r"|flight recorder dump signal|preparing to dump debug info", re.IGNORECASE)

# -- collectives and world size ------------------------------------------------------------------------
_WATCHDOG_RANK = re.compile(r"\bRank (?P<rank>\d+)\]")  # [Rank 3], [PG 0 Rank 3], [PG ID 0 PG GUID 0(default_pg) Rank 3]
_WORK = re.compile(r"WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)")
# The job's size, as NCCL, torchrun, Lightning and PyTorch's process group print it. A log may name
# smaller groups too (a tensor-parallel communicator): the largest is the world.
# (local_world_size is one node's, torchrun's group_world_size the number of nodes: not the world)
_WORLD = re.compile(
    r"\bnranks (?P<a>\d+)\b"
    r"|(?<![A-Za-z_])(?:global_|role_|dist_)?world[_ ]sizes?[\"']?\s*[=:]\s*\[?(?P<b>\d+)"
    r"|\[Rank \d+ ?/ ?(?P<d>\d+)\]|\brank \d+ ?/ ?(?P<e>\d+)\b|\bMEMBER: \d+/(?P<f>\d+)\b"
    r"|initialization options: size: (?P<g>\d+)\b|store-based barrier for key:\S+ with (?P<h>\d+) nodes"
    r"|\bNum(?:ber of)? processes: (?P<i>\d+)"
    r"|(?<![A-Za-z_])world[_ ]size (?:is |of )?(?P<j>\d+)\b|\brank \d+ (?:of|out of) (?P<k>\d+)\b"
    r"|\b(?:SLURM_NTASKS|SLURM_NPROCS|OMPI_COMM_WORLD_SIZE|PMI_SIZE|PMIX_SIZE|ntasks)\s*[=:]\s*(?P<l>\d+)"
    r"|All distributed processes registered\. Starting with (?P<m>\d+) processes",
    re.IGNORECASE,
)
_WORLD_HINT = re.compile(r"nranks|world.size|rank \d+ ?/|rank \d+ (?:of|out of) |MEMBER: |options: size"
                         r"|barrier for key|num(?:ber of)? processes|ntasks|_NPROCS|_SIZE\s*[=:]"
                         r"|Starting with \d+ processes", re.IGNORECASE)
MAX_CLASSIFIED = 20_000  # distinct (masked) lines whose kind is remembered

# -- when -------------------------------------------------------------------------------------------
_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
_WHEN = (
    re.compile(r"(?P<y>\d{4})[-/](?P<mo>\d{2})[-/](?P<d>\d{2})[T _](?P<h>\d{1,2}):(?P<mi>\d{2}):(?P<s>\d{2}(?:[.,]\d+)?)"),
    re.compile(r"\b[IWEF](?P<mo>\d{1,2})(?P<d>\d{2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2}(?:\.\d+)?)"),
    re.compile(r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d{1,2}),? "
               r"(?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2}(?:\.\d+)?)"),
)


def line_time(raw: str) -> tuple[int, float] | None:
    """When a line was printed, from the timestamp in its first 100 characters: ``(format, seconds)``.
    Seconds are comparable only within one format (a glog timestamp has no year)."""
    head = raw[:100]
    for kind, pattern in enumerate(_WHEN):
        m = pattern.search(head)
        if not m:
            continue
        g = m.groupdict()
        month = _MONTHS[g["mon"]] if g.get("mon") else int(g["mo"])
        year = int(g["y"]) if g.get("y") else 0
        seconds = float(g["s"].replace(",", "."))
        days = (year * 12 + month) * 31 + int(g["d"])
        return kind, days * 86400 + int(g["h"]) * 3600 + int(g["mi"]) * 60 + seconds
    return None


# -- the triager ------------------------------------------------------------------------------------------
@dataclass
class _Candidate:
    failure: FirstFailure
    when: tuple[int, float] | None
    cascade: bool
    end: int | None = None  # the last line of its message, when it goes on after the exception line


@dataclass
class Triage:
    """What the triager concluded. ``first_failure`` is None when the text shows no failure."""

    first_failure: FirstFailure | None = None
    cascade_counts: list[CascadeCount] = field(default_factory=list)  # what followed, counted, most lines first
    cascade_follows: bool = False  # they came after a first failure that is not one of them ("follow it")
    cascade_lines: int = 0
    silent_ranks: list[str] = field(default_factory=list)
    lagging_ranks: list[str] = field(default_factory=list)  # behind their peers in the same collective
    world_size: int | None = None
    # line numbers that belong to the first failure's traceback (so a match there is "its" entry)
    first_failure_lines: tuple[int, int] | None = None


class Triager:
    """Feed it ``(line_no, raw_line)`` in file order with :meth:`add`; :meth:`finish` says what failed first."""

    def __init__(self) -> None:
        self._first: _Candidate | None = None  # earliest failure by line
        self._failures: list[_Candidate] = []  # one per rank (its first), for ordering by time
        self._failed_ranks: dict[str | None, None] = {}
        self._scheduler_only = True  # every failure so far is the scheduler ending the job (a time limit…)
        # With no failure that says what went wrong: the first process exit or collective timeout by line
        # (a timeout storm is one moment); the launcher's reactions only when nothing else shows.
        self._first_quiet: _Candidate | None = None
        self._first_cascade: _Candidate | None = None
        self._cascade_counts: dict[str, int] = {}
        self._cascade_ranks: dict[str, dict[str, None]] = {}
        # rank -> (SeqNum, OpType) of its timeout; None when the line does not say (PyTorch before 1.10, gloo)
        self._timed_out: dict[str, tuple[int, str] | None] = {}
        self._reporting: dict[str, None] = {}  # ranks that printed any failure or cascade line
        self._local_ranks = LocalRanks()
        self._unplaced = False  # a line came from a local rank whose global rank the log did not tell
        self._hosts: dict[str, str] = {}
        self._world: int | None = None
        self._highest_rank = -1  # the highest rank any line names (the world is at least one more)
        # each rank's last ordinary line (its masked form, its line number): who stopped talking early
        self._last_words: dict[str, tuple[str, int]] = {}
        # the traceback each rank is printing: rank -> (start line, frames); ranks interleave their lines
        self._tbs: dict[str | None, tuple[int, list[tuple[str, int, str]]]] = {}
        # a rank's first failure when it was an exception, and whether a chained one is being printed
        self._raised: dict[str | None, _Candidate] = {}
        self._chaining: dict[str | None, None] = {}
        # the first failure of a rank whose exception message may go on over the next lines: (rank, it, lines left)
        self._message: tuple[str | None, _Candidate, int] | None = None
        self._latest: _Candidate | None = None  # the candidate the last failure line made or went on with
        self._kinds: dict[str, _Kind] = {}  # masked line -> what it is

    def add(self, line_no: int, raw: str, cleaned: CleanLine | None = None, key: str | None = None) -> None:
        """One line, in file order. ``cleaned``: its :func:`clean` form and ``key`` its masked form, when
        the caller has them: what a line is is decided once per distinct masked line (a 512-rank cascade
        repeats one line per rank), only the values (rank, SeqNum, time) are read from each."""
        cl = cleaned if cleaned is not None else self._local_ranks.resolve(clean(raw))
        text = cl.text
        if not text:
            return
        rank = cl.rank
        # the process a line comes from: its rank, or (a local rank not placed in the job) its node's N-th
        proc = rank if rank is not None or cl.local is None else f"{cl.local}@{cl.node}"
        if proc is not rank:
            self._unplaced = True
        if rank is not None:
            self._saw_rank(rank)
            if cl.host is not None and len(self._hosts) < MAX_RANKS:
                self._hosts.setdefault(rank, cl.host)
        if key is None or "signal" in key:  # (signal numbers decide the kind and are masked: not cached)
            what = _classify(text)
        else:
            what = self._kinds.get(key)
            if what is None:
                what = _classify(text)
                if len(self._kinds) < MAX_CLASSIFIED:
                    self._kinds[key] = what
        message = self._message
        if message is not None and message[0] == proc:
            if _goes_on(what, text, raw):
                # the failure's message goes on ("what():  CUDA error: …", "ncclInvalidUsage: …", "Last error:")
                message[1].end = line_no
                self._message = (proc, message[1], message[2] - 1) if message[2] > 1 else None
                if what.world:
                    self._read_world(text)
                return
            self._message = None
        if what is _PLAIN or what is _WORLD_ONLY:
            if what.world:
                self._read_world(text)
            if proc not in self._tbs:
                if not self._cascade_counts and _ERROR_LEVEL.search(raw, 0, 160):
                    # logged as an error before any consequence showed: a failure of its own (after the
                    # cascade began, an error logged without a recognised failure is read as part of it)
                    if self._add_failure(line_no, raw, text, cl, proc, None, False) and self._latest:
                        self._message = (proc, self._latest, MESSAGE_LINES)
                elif rank is not None and (rank in self._last_words or len(self._last_words) < MAX_RANKS):
                    self._last_words[rank] = (key if key is not None else text, line_no)
            return
        if what.world:
            self._read_world(text)
        if what.traceback_start:
            if rank is None and (after := _TRACEBACK_AFTER.search(text)) and after["rank"]:
                proc = after["rank"]
            if proc in self._tbs or len(self._tbs) < MAX_RANKS:
                self._tbs[proc] = (line_no, [])
            return
        if what.frame:
            tb = self._tbs.get(proc)
            frame = _FRAME.match(text) if tb is not None else None
            if frame and tb is not None and len(tb[1]) < MAX_TRACEBACK_FRAMES:
                tb[1].append((frame["file"], int(frame["line"]), frame["func"]))
            return
        if what.chain:
            if proc in self._raised:
                self._chaining[proc] = None
            return
        exception = _EXCEPTION.match(text) if what.exception else None
        raised = False  # this exception is (the end of the chain of) its rank's first failure
        if exception and proc in self._chaining:
            self._continue_chain(line_no, raw, proc, exception)
            raised = True
        elif what.cascade is not None:
            self._add_cascade(what, line_no, raw, text, cl)
        elif what.failure:
            raised = self._add_failure(line_no, raw, text, cl, proc, exception, what.scheduler)
        elif what.notice:
            who = rank if rank is not None else _rank_in(text)
            if who is not None and len(self._reporting) < MAX_RANKS:
                self._reporting[who] = None
                self._saw_rank(who)
        if raised and self._latest is not None:
            self._message = (proc, self._latest, MESSAGE_LINES)
        if exception:
            self._tbs.pop(proc, None)  # a traceback ends with its exception line
            if not raised:
                self._raised.pop(proc, None)  # a later exception of its own: a chain now is not the first's

    def _saw_rank(self, rank: str) -> None:
        if rank.isdigit() and len(rank) <= 5 and int(rank) > self._highest_rank:
            self._highest_rank = int(rank)

    def _read_world(self, text: str) -> None:
        m = _WORLD.search(text)
        if m:
            size = int(next(v for v in m.groupdict().values() if v))
            if size <= MAX_RANKS and (self._world is None or size > self._world):
                self._world = size

    def _add_failure(self, line_no: int, raw: str, text: str, cl: CleanLine, proc: str | None,
                     exception: re.Match[str] | None, scheduler: bool) -> bool:
        """Record a failure of process ``proc`` (its rank when known); True when it is that process's first
        (a candidate for the first of all)."""
        rank = cl.rank
        if rank is not None and len(self._reporting) < MAX_RANKS:
            self._reporting[rank] = None
        new_rank = proc not in self._failed_ranks and len(self._failed_ranks) < MAX_RANKS
        if self._first is not None and not new_rank:
            return False  # only each rank's first failure is a candidate for the first of all
        tb = self._tbs.get(proc)
        failure = FirstFailure(line_no=line_no, text=raw.strip()[:500], rank=rank, host=cl.host,
                               local_rank=cl.local if rank is None else None)
        _set_exception(failure, exception, tb)
        candidate = _Candidate(failure, line_time(raw), cascade=False)
        if tb is not None:
            failure.traceback_start = tb[0]
        if self._first is None:
            self._first = candidate
        self._latest = candidate
        self._scheduler_only = self._scheduler_only and scheduler
        if exception and len(self._raised) < MAX_RANKS:
            self._raised[proc] = candidate
        if new_rank:
            self._failed_ranks[proc] = None
            self._failures.append(candidate)
        return True

    def _continue_chain(self, line_no: int, raw: str, proc: str | None, exception: re.Match[str]) -> None:
        """The exception raised while handling (or because of) the process's first one: the chain's last
        exception is the line the failure is reported on; the chain's first traceback still starts it."""
        del self._chaining[proc]
        self._latest = self._raised[proc]
        self._latest.end = None
        failure = self._latest.failure
        frame = failure.frame
        failure.line_no, failure.text = line_no, raw.strip()[:500]
        _set_exception(failure, exception, self._tbs.get(proc))
        failure.frame = failure.frame or frame

    def _add_cascade(self, what: _Kind, line_no: int, raw: str, text: str, cl: CleanLine) -> None:
        kind = what.cascade or ""
        self._cascade_counts[kind] = self._cascade_counts.get(kind, 0) + 1
        host = cl.host
        who = cl.rank if cl.rank is not None else _rank_in(text)
        if who is not None and len(self._reporting) < MAX_RANKS:
            self._saw_rank(who)
            self._cascade_ranks.setdefault(kind, {})[who] = None
            self._reporting[who] = None
            if kind == "watchdog timeout" and self._timed_out.get(who) is None:
                work = _WORK.search(text)
                self._timed_out[who] = (int(work["seq"]), work["op"]) if work else None
        if self._first_cascade is not None and (what.reaction or self._first_quiet is not None):
            return
        task = _SRUN_TASK.search(text) if who is None else None  # srun names the task (the rank) and its node
        rank = task["task"] if task else who
        failure = FirstFailure(line_no=line_no, text=raw.strip()[:500], rank=rank,
                               host=task["host"] if task and host is None else host,
                               local_rank=cl.local if rank is None else None, cascade=True)
        candidate = _Candidate(failure, line_time(raw), cascade=True)
        if self._first_cascade is None:
            self._first_cascade = candidate
        if not what.reaction:
            self._first_quiet = candidate

    def finish(self) -> Triage:
        first = self._earliest()
        out = Triage(world_size=self._world, cascade_lines=sum(self._cascade_counts.values()))
        if first is not None:
            out.first_failure = first.failure
            start = first.failure.traceback_start or first.failure.line_no
            out.first_failure_lines = (start, max(first.end or 0, first.failure.line_no))
        out.cascade_counts = self._cascade_counted()
        out.cascade_follows = bool(out.cascade_counts) and first is not None and not first.cascade
        out.silent_ranks, out.lagging_ranks = self._quiet_and_behind()
        return out

    def _earliest(self) -> _Candidate | None:
        if self._failures:
            return _earliest_of(self._failures, self._first)
        return self._first_quiet or self._first_cascade

    def _cascade_counted(self) -> list[CascadeCount]:
        return [CascadeCount(kind, n, len(self._cascade_ranks.get(kind, {})))
                for kind, n in sorted(self._cascade_counts.items(), key=lambda kv: -kv[1])]

    def _quiet_and_behind(self) -> tuple[list[str], list[str]]:
        silent = self._never_reported() if self._timed_out else []
        if self._scheduler_only:  # a hang: nothing failed but the clock
            silent += self._stopped_early()
        key = lambda r: (len(r), r)  # noqa: E731 (numeric order for digit strings)
        return sorted(set(silent), key=key), sorted(set(self._behind()), key=key)

    def _never_reported(self) -> list[str]:
        """Ranks of the world that printed nothing while others timed out in a collective. The world is
        the size the log states; when it states none (or only a smaller group's), ranks 0 to the highest
        any line names, provided only a few are missing and not a run of them (a log of one node of
        several misses whole nodes: that is not silence)."""
        if self._unplaced:
            return []  # some lines came from ranks that cannot be placed: who said nothing is not known
        world = self._world if self._world is not None and self._highest_rank < self._world else None
        if world is None and self._highest_rank >= 0:
            guess = self._highest_rank + 1
            missing = [r for r in range(guess) if str(r) not in self._reporting]
            if missing and len(missing) <= max(1, guess // 4) and _longest_run(missing) <= 2:
                world = guess
        if world is None or world > MAX_RANKS:
            return []
        return [str(r) for r in range(world) if str(r) not in self._reporting]

    def _stopped_early(self) -> list[str]:
        """In a job that hung (nothing failed, or only the scheduler's clock): the ranks whose last line
        is not the one most of their peers last printed and came before any of those. The others all
        went on to print it ("running step 1/10"); these stopped talking before, where they hang."""
        words = self._last_words
        if len(words) < 4:
            return []
        counts: dict[str, int] = {}
        for said, _no in words.values():
            counts[said] = counts.get(said, 0) + 1
        front_said, n = max(counts.items(), key=lambda kv: kv[1])
        if n * 4 < len(words) * 3:
            return []  # no common last line: nothing to be behind of
        front = min(no for said, no in words.values() if said == front_said)
        quiet = [r for r, (said, no) in words.items() if said != front_said and no < front]
        return quiet if len(quiet) <= len(words) // 4 else []

    def _behind(self) -> list[str]:
        """Ranks behind their peers: an older SeqNum in the same kind of collective, or another kind of
        collective than most ranks are in at no later SeqNum (a mismatch: they took another path)."""
        works = {r: w for r, w in self._timed_out.items() if w is not None}
        if not works:
            return []
        by_op: dict[str, dict[str, int]] = {}
        for rank, (seq, op) in works.items():
            by_op.setdefault(op, {})[rank] = seq
        behind: list[str] = []
        for seqs in by_op.values():
            newest = max(seqs.values())
            behind += [r for r, s in seqs.items() if s < newest]
        main_op = max(by_op, key=lambda op: len(by_op[op]))
        front = max(by_op[main_op].values())
        behind += [r for r, (seq, op) in works.items() if op != main_op and seq <= front
                   and len(by_op[op]) < len(by_op[main_op])]
        return behind

    def host_of(self, rank: str) -> str | None:
        return self._hosts.get(rank)


def _earliest_of(candidates: list[_Candidate], first_by_line: _Candidate | None) -> _Candidate | None:
    """By timestamp when every candidate carries one of the same format, else the first by line."""
    kinds = {c.when[0] for c in candidates if c.when is not None}
    if all(c.when is not None for c in candidates) and len(kinds) == 1:
        return min(candidates, key=lambda c: (c.when[1] if c.when else 0.0, c.failure.line_no))
    return first_by_line


def _set_exception(failure: FirstFailure, exception: re.Match[str] | None,
                   tb: tuple[int, list[tuple[str, int, str]]] | None) -> None:
    failure.exception = exception["type"] if exception else None
    failure.message = (exception["message"] or "")[:300] if exception else None
    failure.frame = _user_frame(tb[1]) if tb and exception else None


def _goes_on(what: _Kind, text: str, raw: str) -> bool:
    """Whether a line after a failure line (of the same rank) is more of its message: not a log record of
    its own (no timestamp, no level), and plain text or an error line that is no process dying."""
    if what is not _PLAIN and what is not _WORLD_ONLY and not (what.failure and not what.exception):
        return False
    if what.failure and _DIES.search(text):
        return False
    return line_time(raw) is None and _ANY_LEVEL.search(raw, 0, 160) is None


def _longest_run(numbers: list[int]) -> int:
    """The longest run of consecutive numbers in ascending ``numbers``."""
    best = run = 0
    for i, n in enumerate(numbers):
        run = run + 1 if i and n == numbers[i - 1] + 1 else 1
        best = max(best, run)
    return best


@dataclass(frozen=True)
class _Kind:
    """What a line is, for the triager (decided from its text, the same for every rank printing it)."""

    traceback_start: bool = False
    frame: bool = False
    chain: bool = False  # "During handling of the above exception…": the traceback goes on
    cascade: str | None = None  # its kind of consequence
    reaction: bool = False  # the launcher reacting to a failure (SIGTERMs, step aborts): never the first
    failure: bool = False
    scheduler: bool = False  # the scheduler ended the job for a reason of its own (a time limit…)
    exception: bool = False  # a Python exception line (a traceback's last)
    notice: bool = False  # a watchdog's further notice: the rank reported
    world: bool = False  # may state the world size


_PLAIN = _Kind()
_WORLD_ONLY = _Kind(world=True)


def _classify(text: str) -> _Kind:
    if text.startswith("# "):
        return _PLAIN  # a comment or a heading someone put in the paste ("# source: …", "# .out:")
    world = _WORLD_HINT.search(text) is not None
    if _TRACEBACK_START.match(text) or ("Traceback (" in text and _TRACEBACK_AFTER.search(text)):
        return _Kind(traceback_start=True, world=world)
    if text.startswith("File ") and _FRAME.match(text):
        return _Kind(frame=True)
    if _CHAIN.match(text):
        return _Kind(chain=True)
    exception = _EXCEPTION.match(text) is not None
    cascade = next((name for name, pattern in _CASCADE if pattern.search(text)), None)
    scheduler = _SCHEDULER_END.search(text) is not None
    if cascade is not None and (scheduler or (cascade != "watchdog timeout" and _OWN_CUDA_FAILURE.search(text))):
        return _Kind(failure=True, scheduler=scheduler, exception=exception, world=world)
    if not exception and _ENDED.search(text) and not _NAMES_A_FAULT.search(text):
        return _Kind(cascade="launcher exit", world=world)
    if cascade is not None:
        return _Kind(cascade=cascade, reaction=cascade == "launcher exit", exception=exception, world=world)
    if exception or _FAILURE_LINE.search(text):
        return _Kind(failure=True, exception=exception, world=world)
    notice = _WATCHDOG_NOTICE.search(text) is not None
    if notice:
        return _Kind(notice=notice, world=world)
    return _WORLD_ONLY if world else _PLAIN


_SRUN_TASK = re.compile(r"srun: error: (?P<host>[\w.-]+): tasks? (?P<task>\d+)(?:[,-]\d+)*: ")


def _rank_in(text: str) -> str | None:
    m = _WATCHDOG_RANK.search(text)
    return m["rank"] if m else None


def _user_frame(frames: list[tuple[str, int, str]]) -> str | None:
    """The innermost frame in the user's own code (not a library), as ``train.py:123 in collate``."""
    for file, line, func in reversed(frames):
        if not _LIBRARY_PATH.search(file):
            return f"{file.rsplit('/', 1)[-1]}:{line} in {func}"
    return None


def attach_triage(diagnosis: Diagnosis, triager: Triager) -> Diagnosis:
    """Put what the triager found on ``diagnosis``; the first failure names the entry matched on its lines."""
    found = triager.finish()
    diagnosis.cascade_counts, diagnosis.cascade_follows = found.cascade_counts, found.cascade_follows
    diagnosis.silent_ranks = found.silent_ranks
    diagnosis.silent_hosts = {r: h for r in found.silent_ranks if (h := triager.host_of(r))}
    diagnosis.lagging_ranks = found.lagging_ranks
    ff = found.first_failure
    if ff is None or found.first_failure_lines is None:
        return diagnosis
    start, end = found.first_failure_lines
    for m in diagnosis.matches:
        if any(start <= n <= end for n in [*m.line_nos, *([m.line_no] if m.line_no else [])]):
            ff.entry_id = m.entry_id
            break
    diagnosis.first_failure = ff
    return diagnosis


@dataclass(frozen=True)
class Seen:
    """Where an entry's exact evidence showed in a log, for :func:`first_failure_leads`."""

    line_no: int | None  # the first line it fired on
    when: tuple[int, float] | None  # the earliest timestamp on its lines (see line_time); None: untimed
    warned: bool  # every line it fired on was logged as a warning (or continues a warning's message)


def logged_as_warning(raw: str, record: str) -> bool:
    """Whether ``raw`` was logged at warning severity; an indented line continues the message of
    ``record``, the last line that was not (a warning's "\tMissing key(s) in state_dict: …")."""
    line = record if raw[:1].isspace() else raw
    return _WARNING_LEVEL.search(line, 0, 160) is not None


def first_failure_leads(diagnosis: Diagnosis, seen: dict[str, Seen], threshold: float) -> None:
    """When the log's first failure is one no entry knows, a root cause matched elsewhere is not posted as
    the answer ahead of it: one that showed only after it is a consequence (the job's processes killed
    afterwards read as the OOM killer's work, a collective failing once a peer is gone); one matched
    only on warnings before it, a problem the program went on from. Such matches stay listed, below the
    confidence ``threshold``. A match within :data:`SAME_FAILURE_LINES` lines or :data:`SAME_FAILURE_S`
    seconds of the first failure tells of that failure and is left alone.

    "After" needs a log (at least :data:`LOG_LINES` lines: in a paste of a few lines someone chose what
    to show, and the later error is often the one asked about), a first failure that says what failed
    (one known only by its error severity is too weak to make the rest its consequence) and comparable
    clocks: the same timestamp format on both lines, or none on either (one stream, read in order). A
    line with a clock of its own format (a pasted ``dmesg``) is another source, whose order against the
    log is not known."""
    ff = diagnosis.first_failure
    if ff is None or ff.cascade or ff.entry_id is not None:
        return
    said = _classify(clean(ff.text).text)
    log = diagnosis.lines_total >= LOG_LINES and said is not _PLAIN and said is not _WORLD_ONLY
    ff_when = line_time(ff.text)
    for m in diagnosis.matches:
        where = seen.get(m.entry_id)
        if m.role != "root-cause" or not m.confident or where is None:
            continue
        if not log:
            after = False
        elif where.when is not None and ff_when is not None:
            after = where.when[0] == ff_when[0] and where.when[1] > ff_when[1] + SAME_FAILURE_S
        else:
            after = where.when is None and ff_when is None and (where.line_no or 0) > ff.line_no + SAME_FAILURE_LINES
        if after or where.warned:
            m.confident = False
            m.score = min(m.score, round(threshold - 0.1, 1))
