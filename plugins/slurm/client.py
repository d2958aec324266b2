"""Every SLURM command tracebot runs goes through :class:`SlurmCli`: argv lists, a timeout on each call,
parsed output, and typed errors (:class:`ControllerDown` when slurmctld does not answer).

Arguments reaching here are already validated (:mod:`tracebot.plugins.slurm.ids`); nothing is ever joined into a
shell line. A controller that is down is found by ``scontrol ping`` (it answers at once when the
connection is refused) before commands that would otherwise wait ~18 s for the controller.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tracebot.plugins.slurm.parse import (
    AmbiguousRecord,
    PidRow,
    parse_listpids,
    parse_records,
    parse_sacct,
    sacct_delimiter,
)

DEFAULT_TIMEOUT_S = 10.0
PING_TIMEOUT_S = 5.0
_DOWN_MARKERS = (
    "unable to contact slurm controller",
    "socket timed out",
    "zero bytes were transmitted",
    "connection refused",
    "connect failure",
    "slurmctld(primary) at",  # scontrol ping: "... is DOWN"
)
_NO_SUCH_JOB = ("invalid job id", "invalid job id specified", "invalid job id specified for step")
SACCT_FIELDS = [
    "JobID", "JobIDRaw", "JobName", "User", "State", "ExitCode", "DerivedExitCode", "Elapsed", "Timelimit",
    "Submit", "Start", "End", "NodeList", "NNodes", "NTasks", "AllocCPUS", "ReqTRES", "Partition",
    "Reason", "WorkDir", "SubmitLine",  # JobID first: parse_sacct relies on it never holding a newline
]


class SlurmError(RuntimeError):
    """A SLURM command failed; the message is safe to show (first line of its stderr)."""


class ControllerDown(SlurmError):
    """slurmctld did not answer: nothing about live jobs can be known until it is back."""


class AccountingDown(SlurmError):
    """slurmdbd did not answer: jobs slurmctld has forgotten (finished > MinJobAge ago) cannot be looked up."""


class SlurmNotInstalled(SlurmError):
    """The SLURM client commands are not on this host."""


@dataclass
class SlurmCli:
    bin_dir: str | None = None  # where sbatch/scontrol/sacct/srun live; None: PATH
    timeout_s: float = DEFAULT_TIMEOUT_S

    def argv(self, tool: str, *args: str) -> list[str]:
        exe = str(Path(self.bin_dir) / tool) if self.bin_dir else tool
        return [exe, *args]

    def run(self, tool: str, *args: str, timeout: float | None = None) -> str:
        """Run one SLURM client command and return its stdout; raise a typed error otherwise."""
        limit = self.timeout_s if timeout is None else timeout
        env = {**os.environ, "SLURM_TIME_FORMAT": "standard", "LC_ALL": "C"}
        try:
            proc = subprocess.run(self.argv(tool, *args), capture_output=True, text=True, errors="replace",
                                  timeout=limit, env=env, check=False)
        except FileNotFoundError as exc:
            raise SlurmNotInstalled(f"`{tool}` was not found on this host: the SLURM client is not "
                                    "installed here (or slurm.bin_dir is wrong).") from exc
        except subprocess.TimeoutExpired as exc:
            if tool in ("scontrol", "squeue", "sinfo"):
                raise ControllerDown(_down_message(f"`{tool}` got no answer within {limit:.0f}s")) from exc
            raise SlurmError(f"`{tool}` did not finish within {limit:.0f}s") from exc
        if proc.returncode != 0:
            message = _first_line(proc.stderr) or _first_line(proc.stdout) or f"exit status {proc.returncode}"
            if any(marker in message.lower() for marker in _DOWN_MARKERS):
                if tool == "sacct":  # sacct talks to slurmdbd, not to the controller
                    raise AccountingDown(
                        f"The SLURM accounting database (slurmdbd) is not answering ({message}). Jobs that "
                        "ended more than a few minutes ago cannot be looked up until it is back; tell the "
                        "cluster admins.")
                raise ControllerDown(_down_message(message))
            raise SlurmError(f"`{tool}` failed: {message}")
        return proc.stdout

    def ping(self) -> None:
        """Raise :class:`ControllerDown` unless slurmctld answers (fast: a refused connection fails at once)."""
        out = self.run("scontrol", "ping", timeout=PING_TIMEOUT_S)
        if " is UP" not in out:
            raise ControllerDown(_down_message(_first_line(out) or "scontrol ping gave no answer"))

    def show_job(self, job_id: str) -> list[dict[str, str]]:
        """``scontrol show job -o``: one record per array task / het component; [] if slurmctld forgot it."""
        try:
            out = self.run("scontrol", "show", "job", "-o", job_id)
        except SlurmError as exc:
            if isinstance(exc, ControllerDown) or not _is_no_such_job(str(exc)):
                raise
            return []
        try:
            return parse_records(out)
        except AmbiguousRecord as exc:
            raise SlurmError(str(exc)) from exc

    def show_steps(self, job_id: str) -> list[dict[str, str]]:
        """The job's steps; [] when it has none (any more): a job that just ended answers "Job step 951. not
        found" (Slurm 22.05), which must not turn a finished job's answer into an error."""
        try:
            return parse_records(self.run("scontrol", "show", "step", "-o", job_id))
        except AmbiguousRecord as exc:
            raise SlurmError(str(exc)) from exc
        except SlurmError as exc:
            if isinstance(exc, ControllerDown) or not (_is_no_such_job(str(exc)) or _no_such_step(str(exc))):
                raise
            return []

    def accounting(self, job_id: str, timeout: float | None = None) -> list[dict[str, str]]:
        """``sacct`` rows for the job and its steps (from slurmdbd: works while slurmctld is down)."""
        sep = sacct_delimiter()
        out = self.run("sacct", "--noheader", "--parsable2", f"--delimiter={sep}",
                       f"--format={','.join(SACCT_FIELDS)}", f"--jobs={job_id}", timeout=timeout)
        try:
            return parse_sacct(out.removesuffix("\n"), SACCT_FIELDS, sep) if out.strip() else []
        except AmbiguousRecord as exc:
            raise SlurmError(str(exc)) from exc

    def hostnames(self, nodelist: str) -> list[str]:
        """Expand ``node[01-03]`` (done locally by scontrol; no controller needed)."""
        return self.run("scontrol", "show", "hostnames", nodelist).split()

    def listpids(self, job_id: str) -> list[PidRow]:
        """Processes of the job on THIS node (asks the local slurmd)."""
        return parse_listpids(self.run("scontrol", "listpids", job_id))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _no_such_step(message: str) -> bool:
    low = message.lower()
    return "job step" in low and "not found" in low


def _is_no_such_job(message: str) -> bool:
    return any(marker in message.lower() for marker in _NO_SUCH_JOB)


def _down_message(detail: str) -> str:
    return (f"The SLURM controller (slurmctld) is not answering ({detail}). Running jobs are not affected "
            "by this, but their live state cannot be read until it is back; tell the cluster admins.")
