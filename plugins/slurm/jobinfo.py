"""One view of a job, whichever source knew it: slurmctld (``scontrol``, live and recently ended jobs)
or the accounting database (``sacct``, everything that ever ran, also while slurmctld is down).
"""

from __future__ import annotations

import pwd
import re
import shlex
from dataclasses import dataclass, field

from tracebot.plugins.slurm.client import AccountingDown, ControllerDown, SlurmCli, SlurmError
from tracebot.plugins.slurm.parse import exit_code, uid_of, user_of
from tracebot.plugins.slurm.states import base_state

_NULLS = {"", "(null)", "None", "Unknown", "N/A", "None assigned"}


@dataclass
class Step:
    step_id: str
    name: str
    state: str
    nodes: str
    tasks: str
    elapsed: str = ""


@dataclass
class JobView:
    asked: str  # the id as the user typed it
    job_id: str  # SLURM's own numeric id of this job record (what srun/listpids need)
    display_id: str  # 123, 123_4 or 123+1
    name: str = ""
    user: str = ""
    uid: int | None = None  # SLURM's uid of the owner (scontrol's ``UserId=alice(1001)``); sacct's rows name no uid
    state: str = ""  # as SLURM prints it, e.g. "CANCELLED by 1000"
    reason: str = ""
    exit: tuple[int, int] | None = None
    derived_exit: tuple[int, int] | None = None
    nodelist: str = ""
    num_nodes: str = ""
    num_tasks: str = ""
    elapsed: str = ""
    time_limit: str = ""
    submit: str = ""
    start: str = ""
    end: str = ""
    partition: str = ""
    requested: str = ""  # requested TRES: cpu=..,mem=..,node=..,gres/gpu=..
    stdout: str = ""
    stderr: str = ""
    workdir: str = ""
    dependency: str = ""
    batch_host: str = ""
    array_job_id: str = ""
    array_task_id: str = ""
    submit_line: str = ""
    steps: list[Step] = field(default_factory=list)
    source: str = "scontrol"

    @property
    def base_state(self) -> str:
        return base_state(self.state)

    @property
    def cancelled_by(self) -> str | None:
        """``CANCELLED by 1000`` -> the user name of uid 1000 (or the uid when unknown here)."""
        m = re.match(r"CANCELLED by (\d+)", self.state)
        if not m:
            return None
        try:
            return pwd.getpwuid(int(m.group(1))).pw_name
        except KeyError:
            return f"uid {m.group(1)}"


def _clean(value: str | None) -> str:
    return "" if value is None or value.strip() in _NULLS else value.strip()


def from_scontrol(asked: str, rec: dict[str, str]) -> JobView:
    job_id = rec.get("JobId", "")
    if _clean(rec.get("ArrayTaskId")):
        display = f"{rec['ArrayJobId']}_{rec['ArrayTaskId']}"
    elif _clean(rec.get("HetJobId")):
        display = f"{rec['HetJobId']}+{rec.get('HetJobOffset', '0')}"
    else:
        display = job_id
    return JobView(
        asked=asked, job_id=job_id, display_id=display, name=rec.get("JobName", ""),
        user=user_of(rec.get("UserId", "")), uid=uid_of(rec.get("UserId", "")), state=rec.get("JobState", ""), reason=_clean(rec.get("Reason")),
        exit=exit_code(rec.get("ExitCode", "")), derived_exit=exit_code(rec.get("DerivedExitCode", "")),
        nodelist=_clean(rec.get("NodeList")), num_nodes=rec.get("NumNodes", ""), num_tasks=rec.get("NumTasks", ""),
        elapsed=rec.get("RunTime", ""), time_limit=rec.get("TimeLimit", ""), submit=_clean(rec.get("SubmitTime")),
        start=_clean(rec.get("StartTime")), end=_clean(rec.get("EndTime")), partition=rec.get("Partition", ""),
        requested=_clean(rec.get("TRES")), stdout=_clean(rec.get("StdOut")), stderr=_clean(rec.get("StdErr")),
        workdir=_clean(rec.get("WorkDir")), dependency=_clean(rec.get("Dependency")),
        batch_host=_clean(rec.get("BatchHost")), array_job_id=_clean(rec.get("ArrayJobId")),
        array_task_id=_clean(rec.get("ArrayTaskId")), source="scontrol",
    )


def from_sacct(asked: str, rows: list[dict[str, str]]) -> list[JobView]:
    """Job records (allocation rows) with their steps attached; steps are rows whose JobID has a dot."""
    jobs: dict[str, JobView] = {}
    for row in rows:
        if "." in row["JobID"]:
            continue
        display = row["JobID"]
        array_job, _, array_task = display.partition("_") if "_" in display else ("", "", "")
        jobs[row["JobIDRaw"]] = JobView(
            asked=asked, job_id=row["JobIDRaw"], display_id=display, name=row["JobName"], user=row["User"],
            state=row["State"], reason=_clean(row["Reason"]), exit=exit_code(row["ExitCode"]),
            derived_exit=exit_code(row["DerivedExitCode"]), nodelist=_clean(row["NodeList"]),
            num_nodes=row["NNodes"], num_tasks=row["NTasks"], elapsed=row["Elapsed"], time_limit=row["Timelimit"],
            submit=_clean(row["Submit"]), start=_clean(row["Start"]), end=_clean(row["End"]),
            partition=row["Partition"], requested=_clean(row["ReqTRES"]), workdir=_clean(row["WorkDir"]),
            array_job_id=array_job, array_task_id=array_task, submit_line=row["SubmitLine"], source="sacct",
        )
    for row in rows:
        head, dot, step = row["JobIDRaw"].partition(".")
        if dot and head in jobs:
            jobs[head].steps.append(Step(step, row["JobName"], row["State"], _clean(row["NodeList"]),
                                         row["NTasks"], row["Elapsed"]))
    return list(jobs.values())


def steps_from_scontrol(records: list[dict[str, str]]) -> list[Step]:
    return [Step(rec.get("StepId", "").partition(".")[2], rec.get("Name", ""), rec.get("State", ""),
                 _clean(rec.get("NodeList")), rec.get("Tasks", "")) for rec in records]


def submit_line_outputs(submit_line: str) -> tuple[str, str]:
    """``-o``/``--output`` and ``-e``/``--error`` from an sbatch command line (sacct's SubmitLine).

    Slurm 22.05's sacct has no StdOut field, so for jobs slurmctld has forgotten this is where the
    paths still are. Parsed with shlex (never run); ``#SBATCH`` lines inside the script are not seen.
    """
    try:
        words = shlex.split(submit_line)
    except ValueError:
        return "", ""
    out = err = ""
    for i, word in enumerate(words):
        if word == "--wrap" or word.startswith("--wrap="):
            break  # the rest is the wrapped command, not sbatch options
        for short, long, setter in (("-o", "--output", "out"), ("-e", "--error", "err")):
            value = None
            if word in (short, long) and i + 1 < len(words):
                value = words[i + 1]
            elif word.startswith(long + "="):
                value = word.split("=", 1)[1]
            elif word.startswith(short) and len(word) > 2 and not word.startswith("--"):
                value = word[2:]
            if value is not None:
                if setter == "out":
                    out = value
                else:
                    err = value
    return out, err


def _add_accounting(cli: SlurmCli, view: JobView, timeout: float | None) -> None:
    """Finished jobs: scontrol says ``CANCELLED``, sacct says ``CANCELLED by 1000`` and has the steps."""
    try:
        rows = cli.accounting(view.job_id, timeout=timeout)
    except SlurmError:
        return  # accounting is extra detail here; the controller's record stands on its own
    for acct in from_sacct(view.asked, rows):
        if acct.job_id == view.job_id:
            if acct.base_state == view.base_state:
                view.state = acct.state
            view.steps = acct.steps
            view.derived_exit = view.derived_exit or acct.derived_exit


@dataclass
class Lookup:
    """What is known about an id: job views (several for an array or het job) and how they were found."""

    jobs: list[JobView]
    controller_down: str | None = None  # the ControllerDown message when slurmctld did not answer


def lookup(cli: SlurmCli, job_id: str, accounting_timeout: float | None = None) -> Lookup:
    """Ask slurmctld first (it knows pending jobs, reasons and log paths), then accounting."""
    down: str | None = None
    try:
        cli.ping()
        records = cli.show_job(job_id)
    except ControllerDown as exc:
        down, records = str(exc), []
    if records:
        views = [from_scontrol(job_id, rec) for rec in records]
        for view in views:
            if view.base_state in ("RUNNING", "COMPLETING", "SUSPENDED"):
                view.steps = steps_from_scontrol(cli.show_steps(view.job_id))
            elif view.base_state not in ("PENDING", "REQUEUED", "CONFIGURING"):
                _add_accounting(cli, view, accounting_timeout)
        return Lookup(views)
    try:
        rows = cli.accounting(job_id, timeout=accounting_timeout)
    except AccountingDown as exc:
        if down:  # both daemons silent: say so in one answer
            raise ControllerDown(f"{down} {exc}") from exc
        raise
    views = from_sacct(job_id, rows)
    for view in views:
        view.stdout, view.stderr = submit_line_outputs(view.submit_line)
        view.stderr = view.stderr or view.stdout
    return Lookup(views, controller_down=down)
