"""Log triage: the first failure in a log, known or not, the cascade after it, and the ranks that went quiet.

When a 64-rank job dies, hundreds of lines say so; one of them is where it started. The triager reads
the lines the matcher reads (every line of a paste, the candidate lines of a large log), one at a time
and in bounded memory, and sorts what failed into two kinds:

- **failures**: a Python exception (the last line of a traceback, with the innermost frame in the user's
  own code), a C++ ``terminate called``, a CUDA or NCCL error, a signal or a kill, a ``FATAL`` line;
- **cascade**: what a failure on another rank brings about (watchdog timeouts, aborted communicators,
  the launcher's SIGTERMs and ChildFailedError summary, srun's step aborts).

The first failure is the earliest failure by timestamp when the failure lines carry comparable ones
(clocks of several nodes, a log concatenated node by node), else by line; only when there is nothing
but cascade is the earliest cascade line the first failure. Ranks that never printed a failure while
their peers timed out in a collective are named as silent, the usual culprit of a hang.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracebot.matcher.normalize import CleanLine, clean
from tracebot.result import Diagnosis, FirstFailure

TRIAGE_MIN_LINES = 4  # a text of fewer lines is one error, not a log
MAX_RANKS = 1 << 16
MAX_TRACEBACK_FRAMES = 64

# -- what a line is ----------------------------------------------------------------------------------
_TRACEBACK_START = re.compile(r"^Traceback \(most recent call last\):")
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
    r"|NVRM: Xid\b|fallen off the bus|\bNode failure on\b",
    re.IGNORECASE,
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
        r"|Broken pipe"
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
    r"|\bNum processes: (?P<i>\d+)",
    re.IGNORECASE,
)
_WORLD_HINT = re.compile(r"nranks|world.size|rank \d+ ?/|MEMBER: |options: size|barrier for key|num processes",
                         re.IGNORECASE)
MAX_CLASSIFIED = 20_000  # distinct (masked) lines whose kind is remembered

# -- when -------------------------------------------------------------------------------------------
_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
_WHEN = (
    re.compile(r"(?P<y>\d{4})[-/](?P<mo>\d{2})[-/](?P<d>\d{2})[T _](?P<h>\d{1,2}):(?P<mi>\d{2}):(?P<s>\d{2}(?:[.,]\d+)?)"),
    re.compile(r"\b[IWEF](?P<mo>\d{2})(?P<d>\d{2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2}(?:\.\d+)?)"),
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


@dataclass
class Triage:
    """What the triager concluded. ``first_failure`` is None when the text shows no failure."""

    first_failure: FirstFailure | None = None
    cascade: str = ""  # "240 watchdog timeouts on 15 ranks and 3 launcher exits follow it"
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
        self._first_cascade: _Candidate | None = None
        self._cascade_counts: dict[str, int] = {}
        self._cascade_ranks: dict[str, dict[str, None]] = {}
        # rank -> (SeqNum, OpType) of its timeout; None when the line does not say (PyTorch before 1.10, gloo)
        self._timed_out: dict[str, tuple[int, str] | None] = {}
        self._reporting: dict[str, None] = {}  # ranks that printed any failure or cascade line
        self._hosts: dict[str, str] = {}
        self._world: int | None = None
        # the traceback each rank is printing: rank -> (start line, frames); ranks interleave their lines
        self._tbs: dict[str | None, tuple[int, list[tuple[str, int, str]]]] = {}
        self._kinds: dict[str, _Kind] = {}  # masked line -> what it is

    def add(self, line_no: int, raw: str, cleaned: CleanLine | None = None, key: str | None = None) -> None:
        """One line, in file order. ``cleaned``: its :func:`clean` form and ``key`` its masked form, when
        the caller has them: what a line is is decided once per distinct masked line (a 512-rank cascade
        repeats one line per rank), only the values (rank, SeqNum, time) are read from each."""
        cl = cleaned or clean(raw)
        text = cl.text
        if not text:
            return
        if cl.rank is not None and cl.host is not None and len(self._hosts) < MAX_RANKS:
            self._hosts.setdefault(cl.rank, cl.host)
        if key is None or "signal" in key:  # (signal numbers decide the kind and are masked: not cached)
            what = _classify(text)
        else:
            what = self._kinds.get(key)
            if what is None:
                what = _classify(text)
                if len(self._kinds) < MAX_CLASSIFIED:
                    self._kinds[key] = what
        if what is _PLAIN:
            return
        if what.world:
            m = _WORLD.search(text)
            if m:
                size = int(next(v for v in m.groupdict().values() if v))
                if size <= MAX_RANKS and (self._world is None or size > self._world):
                    self._world = size
        if what.traceback_start:
            if cl.rank in self._tbs or len(self._tbs) < MAX_RANKS:
                self._tbs[cl.rank] = (line_no, [])
            return
        if what.frame:
            tb = self._tbs.get(cl.rank)
            frame = _FRAME.match(text) if tb is not None else None
            if frame and tb is not None and len(tb[1]) < MAX_TRACEBACK_FRAMES:
                tb[1].append((frame["file"], int(frame["line"]), frame["func"]))
            return
        exception = _EXCEPTION.match(text) if what.exception else None
        if what.cascade is not None:
            self._add_cascade(what.cascade, line_no, raw, text, cl.rank, cl.host)
        elif what.failure:
            self._add_failure(line_no, raw, text, cl.rank, cl.host, exception)
        elif what.notice:
            who = cl.rank if cl.rank is not None else _rank_in(text)
            if who is not None and len(self._reporting) < MAX_RANKS:
                self._reporting[who] = None
        if exception:
            self._tbs.pop(cl.rank, None)  # a traceback ends with its exception line

    def _add_failure(self, line_no: int, raw: str, text: str, rank: str | None, host: str | None,
                     exception: re.Match[str] | None) -> None:
        if rank is not None and len(self._reporting) < MAX_RANKS:
            self._reporting[rank] = None
        new_rank = rank not in self._failed_ranks and len(self._failed_ranks) < MAX_RANKS
        if self._first is not None and not new_rank:
            return  # only each rank's first failure is a candidate for the first of all
        tb = self._tbs.get(rank)
        frame = _user_frame(tb[1]) if tb and exception else None
        failure = FirstFailure(
            line_no=line_no, text=raw.strip()[:500], rank=rank, host=host,
            exception=exception["type"] if exception else None,
            message=(exception["message"] or "")[:300] if exception else None,
            frame=frame,
        )
        candidate = _Candidate(failure, line_time(raw), cascade=False)
        if tb is not None:
            failure.traceback_start = tb[0]
        if self._first is None:
            self._first = candidate
        if new_rank:
            self._failed_ranks[rank] = None
            self._failures.append(candidate)

    def _add_cascade(self, kind: str, line_no: int, raw: str, text: str, rank: str | None,
                     host: str | None) -> None:
        self._cascade_counts[kind] = self._cascade_counts.get(kind, 0) + 1
        who = rank if rank is not None else _rank_in(text)
        if who is not None and len(self._reporting) < MAX_RANKS:
            self._cascade_ranks.setdefault(kind, {})[who] = None
            self._reporting[who] = None
            if kind == "watchdog timeout" and self._timed_out.get(who) is None:
                work = _WORK.search(text)
                self._timed_out[who] = (int(work["seq"]), work["op"]) if work else None
        if self._first_cascade is None:
            failure = FirstFailure(line_no=line_no, text=raw.strip()[:500], rank=who, host=host, cascade=True)
            self._first_cascade = _Candidate(failure, line_time(raw), cascade=True)

    def finish(self) -> Triage:
        first = self._earliest()
        out = Triage(world_size=self._world, cascade_lines=sum(self._cascade_counts.values()))
        if first is not None:
            out.first_failure = first.failure
            start = first.failure.traceback_start or first.failure.line_no
            out.first_failure_lines = (start, first.failure.line_no)
        out.cascade = self._cascade_phrase(first)
        out.silent_ranks, out.lagging_ranks = self._quiet_and_behind()
        return out

    def _earliest(self) -> _Candidate | None:
        if not self._failures:
            return self._first_cascade
        timed = [c for c in self._failures if c.when is not None]
        kinds = {c.when[0] for c in timed if c.when is not None}
        if len(timed) == len(self._failures) and len(kinds) == 1:
            return min(self._failures, key=lambda c: (c.when[1] if c.when else 0.0, c.failure.line_no))
        return self._first

    def _cascade_phrase(self, first: _Candidate | None) -> str:
        if not self._cascade_counts:
            return ""
        parts = []
        for kind, n in sorted(self._cascade_counts.items(), key=lambda kv: -kv[1]):
            ranks = self._cascade_ranks.get(kind, {})
            on = f" on {len(ranks)} rank{'s' if len(ranks) != 1 else ''}" if len(ranks) > 1 else ""
            parts.append(f"{n} {kind}{'s' if n != 1 and not kind.endswith('s') else ''}{on}")
        listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        if first is not None and not first.cascade:
            return f"{listed} follow{'s' if sum(self._cascade_counts.values()) == 1 else ''} it"
        return listed

    def _quiet_and_behind(self) -> tuple[list[str], list[str]]:
        if not self._timed_out:
            return [], []
        behind: list[str] = []
        by_op: dict[str, dict[str, int]] = {}
        for rank, work in self._timed_out.items():
            if work is not None:
                by_op.setdefault(work[1], {})[rank] = work[0]
        for seqs in by_op.values():
            newest = max(seqs.values())
            behind += [r for r, s in seqs.items() if s < newest]
        silent: list[str] = []
        world = self._world
        numbered = [int(r) for r in self._reporting if r.isdigit()]
        if world is None and numbered and not self._failures:
            # Nothing failed, no size stated: ranks 0..highest that reported, if only a few are missing in
            # between (a log of one node of several would miss whole nodes: not read as silence).
            guess = max(numbered) + 1
            if guess - len(set(numbered)) <= max(1, guess // 8):
                world = guess
        if world is not None and world <= MAX_RANKS:
            silent = [str(r) for r in range(world) if str(r) not in self._reporting]
        key = lambda r: (len(r), r)  # noqa: E731 (numeric order for digit strings)
        return sorted(silent, key=key), sorted(set(behind), key=key)

    def host_of(self, rank: str) -> str | None:
        return self._hosts.get(rank)


@dataclass(frozen=True)
class _Kind:
    """What a line is, for the triager (decided from its text, the same for every rank printing it)."""

    traceback_start: bool = False
    frame: bool = False
    cascade: str | None = None  # its kind of consequence
    failure: bool = False
    exception: bool = False  # a Python exception line (a traceback's last)
    notice: bool = False  # a watchdog's further notice: the rank reported
    world: bool = False  # may state the world size


_PLAIN = _Kind()


def _classify(text: str) -> _Kind:
    world = _WORLD_HINT.search(text) is not None
    if _TRACEBACK_START.match(text):
        return _Kind(traceback_start=True, world=world)
    if text.startswith("File ") and _FRAME.match(text):
        return _Kind(frame=True)
    exception = _EXCEPTION.match(text) is not None
    cascade = next((name for name, pattern in _CASCADE if pattern.search(text)), None)
    if cascade is not None and (_SCHEDULER_END.search(text) or (cascade != "watchdog timeout" and _OWN_CUDA_FAILURE.search(text))):
        return _Kind(failure=True, exception=exception, world=world)
    if cascade is not None:
        return _Kind(cascade=cascade, exception=exception, world=world)
    if exception or _FAILURE_LINE.search(text):
        return _Kind(failure=True, exception=exception, world=world)
    notice = _WATCHDOG_NOTICE.search(text) is not None
    return _Kind(notice=notice, world=world) if notice or world else _PLAIN


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
    diagnosis.cascade = found.cascade
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


def triage_lines(lines: list[tuple[int, str]]) -> Triage:
    triager = Triager()
    for no, raw in lines:
        triager.add(no, raw)
    return triager.finish()
