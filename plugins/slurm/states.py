"""What SLURM's job states and pending reasons mean, in plain words, and what to do about them.

Reason codes are the ones ``squeue``/``scontrol`` print (see the "JOB REASON CODES" section of the
squeue man page); states are sacct's "JOB STATE CODES". Unknown codes get a generic explanation that
names the code rather than pretending to know it.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from tracebot.plugin_api import Status


@dataclass(frozen=True)
class Explanation:
    meaning: str
    advice: str


PENDING_REASONS: dict[str, Explanation] = {
    "Priority": Explanation(
        "other jobs with higher priority are ahead of it in the queue",
        "Nothing is wrong; it starts when they do. `sprio -j <id>` shows its priority factors."),
    "Resources": Explanation(
        "it is next in line but the nodes/CPUs/GPUs/memory it asked for are not free yet",
        "Wait, or ask for less (fewer nodes, shorter `--time` lets backfill start it sooner)."),
    "Dependency": Explanation(
        "it waits for another job it depends on (`--dependency`) to reach the required state",
        "Check the job it depends on (`scontrol show job <id> | grep Dependency`)."),
    "DependencyNeverSatisfied": Explanation(
        "the job it depends on ended in a way that can never satisfy the dependency",
        "It will never start: cancel it (`scancel <id>`) and resubmit without the dependency."),
    "BeginTime": Explanation(
        "it asked to start later (`--begin`) and that time has not come yet",
        "Wait, or move the start: `scontrol update jobid=<id> StartTime=now`."),
    "JobHeldUser": Explanation(
        "it is held by its owner (submitted with `--hold` or held with `scontrol hold`)",
        "Release it: `scontrol release <id>`."),
    "JobHeldAdmin": Explanation(
        "an administrator put it on hold",
        "Ask the cluster admins why; only they can release it."),
    "ReqNodeNotAvail": Explanation(
        "a node it needs is down, drained or reserved",
        "Check `sinfo -R`; drop the node from `--nodelist` or wait for the admins to bring it back."),
    "PartitionDown": Explanation(
        "its partition is down", "Submit to another partition or wait for the admins."),
    "PartitionInactive": Explanation(
        "its partition is inactive", "Submit to another partition or ask the admins."),
    "PartitionNodeLimit": Explanation(
        "it asks for more nodes than its partition allows",
        "Ask for fewer nodes (`--nodes`) or use a partition with a higher limit."),
    "PartitionTimeLimit": Explanation(
        "its `--time` is longer than the partition's limit",
        "Lower `--time` (`scontrol update jobid=<id> TimeLimit=...`) or use another partition."),
    "NodeDown": Explanation(
        "a node it needs is down", "Wait for the admins, or exclude the node (`--exclude`)."),
    "BadConstraints": Explanation(
        "its constraints (`--constraint`, features, sizes) can never be satisfied",
        "Fix the request and resubmit; it will not start as it is."),
    "InvalidAccount": Explanation(
        "its account is invalid", "Resubmit with a valid `--account`; `sacctmgr show assoc user=$USER`."),
    "InvalidQOS": Explanation(
        "its QOS is invalid", "Resubmit with a valid `--qos`; `sacctmgr show assoc user=$USER`."),
    "Licenses": Explanation(
        "the licenses it asked for are in use", "Wait, or ask for fewer (`--licenses`)."),
    "Reservation": Explanation(
        "it waits for its advanced reservation to start", "Wait for the reservation (`scontrol show res`)."),
    "JobArrayTaskLimit": Explanation(
        "its array already runs as many tasks as the `%N` limit allows",
        "Nothing is wrong; raise the limit with `scontrol update jobid=<id> ArrayTaskThrottle=N`."),
    "launch failed requeued held": Explanation(
        "launching it failed, so SLURM requeued and held it",
        "Look for a node problem (`sinfo -R`) and the slurmd log, then `scontrol release <id>`."),
    "JobLaunchFailure": Explanation(
        "the job could not be launched (a file system or node problem)",
        "Check the job's working directory and output path exist, then resubmit."),
    "Cleaning": Explanation(
        "it is being requeued and still cleaning up a previous run", "Wait a moment."),
    "Prolog": Explanation(
        "its prolog script is still running on the nodes", "Wait; if it lasts, ask the admins."),
    "None": Explanation(
        "the scheduler has not looked at it yet", "Wait a few seconds and ask again."),
}

_LIMIT_PREFIXES = {
    "QOS": "a limit of its QOS (quality of service) is reached",
    "Assoc": "a limit of its account/association is reached",
    "MaxCpuPerAccount": "its account's CPU limit is reached",
}


def pending_reason(code: str) -> Explanation:
    """Plain words for a pending reason code; limit codes (``QOSMaxJobsPerUserLimit``) by family."""
    code = code.strip().strip("()")
    if code in PENDING_REASONS:
        return PENDING_REASONS[code]
    for prefix, meaning in _LIMIT_PREFIXES.items():
        if code.startswith(prefix) and ("Limit" in code or "Grp" in code or "Max" in code):
            return Explanation(f"{meaning} ({code})",
                               "Wait for your other jobs to finish, or ask for less; "
                               "`sacctmgr show assoc user=$USER` and `sacctmgr show qos` list the limits.")
    return Explanation(f"SLURM gives the reason `{code}`",
                       "See the JOB REASON CODES in `man squeue` or ask the cluster admins.")


@dataclass(frozen=True)
class StateInfo:
    meaning: str
    advice: str
    status: Status


FINAL_STATES: dict[str, StateInfo] = {
    "COMPLETED": StateInfo(
        "the job script exited with status 0 on every node",
        "Nothing failed in SLURM's eyes; if training stopped early, check that the script reached its last "
        "step (and whether it exits 0 on errors it catches).", "ok"),
    "FAILED": StateInfo(
        "the job script (or a step) exited with a non-zero status",
        "Read the first error in the job's log (below); the earliest error is usually the cause and later "
        "ones are consequences.", "error"),
    "CANCELLED": StateInfo(
        "the job was cancelled (`scancel`) before it finished",
        "Nothing crashed: someone or something cancelled it. Ask whoever did if it was not you.", "warning"),
    "TIMEOUT": StateInfo(
        "the job reached its time limit and SLURM stopped it",
        "Ask for more time (`--time`), or checkpoint more often and resume from the last checkpoint.",
        "error"),
    "OUT_OF_MEMORY": StateInfo(
        "a process went over the job's host (CPU) memory limit and was killed",
        "Ask for more memory (`--mem` / `--mem-per-cpu`) or use less host RAM (fewer DataLoader workers, "
        "smaller prefetch, memory-mapped datasets). This is host RAM, not GPU memory.", "error"),
    "NODE_FAIL": StateInfo(
        "a node of the job failed (crashed, lost its network or was rebooted)",
        "Not your code's fault: resubmit (excluding the node with `--exclude=<node>` if it fails again) "
        "and tell the admins which node it was.", "error"),
    "PREEMPTED": StateInfo(
        "a higher-priority job took the nodes",
        "Resubmit (or use `--requeue`) and resume from your last checkpoint; use a non-preemptible QOS or "
        "partition for long runs.", "warning"),
    "BOOT_FAIL": StateInfo(
        "a node failed to boot for the job", "Resubmit; tell the admins which node.", "error"),
    "DEADLINE": StateInfo(
        "the job could not finish before its `--deadline`", "Move or drop the deadline and resubmit.",
        "error"),
    "REVOKED": StateInfo(
        "a federated sibling of the job started elsewhere", "Look at the sibling job.", "info"),
    "SPECIAL_EXIT": StateInfo(
        "the job was requeued in a special state (an epilog asked for it)",
        "Ask the admins; release it with `scontrol release <id>` once fixed.", "warning"),
}

LIVE_STATES = {"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED", "RESIZING", "SIGNALING",
               "STAGE_OUT", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}


def final_state(state: str) -> StateInfo:
    base = base_state(state)
    return FINAL_STATES.get(base) or StateInfo(
        f"SLURM reports the state `{base}`", "See JOB STATE CODES in `man sacct`.", "info")


def base_state(state: str) -> str:
    """``CANCELLED by 1000`` -> ``CANCELLED``; ``RUNNING+`` -> ``RUNNING``."""
    return state.split()[0].rstrip("+") if state.strip() else ""


def describe_exit(code: tuple[int, int] | None) -> str:
    """``(1, 0)`` -> ``exit code 1``; ``(0, 9)`` -> ``killed by signal 9 (SIGKILL)``; ``(0, 53)`` -> the
    job never started its script.

    SLURM records a job that died before its script ran (slurmstepd could not open the ``--output`` or
    ``--error`` file, change to the working directory, or set up the node) as ``0:53``, shown by
    scontrol as ``RaisedSignal:53(Real-time_signal_19)``: nobody sent the job a signal, so saying
    "killed by signal 53" sends people looking for a killer that does not exist.
    """
    if code is None:
        return ""
    status, sig = code
    if (status, sig) == (0, 53):
        return (
            "never started its script (SLURM's 0:53: the node could not launch it, usually because the "
            "--output/--error file or the working directory could not be opened there, so there is no log)"
        )
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            if signal.SIGRTMIN <= sig <= signal.SIGRTMAX:
                return f"ended by real-time signal {sig} (SIGRTMIN+{sig - signal.SIGRTMIN})"
            name = f"signal {sig}"
        return f"killed by signal {sig} ({name})"
    if status > 128 and status - 128 < 65:
        try:
            return f"exit code {status} (= 128 + {status - 128}: {signal.Signals(status - 128).name})"
        except ValueError:
            pass
    return f"exit code {status}"
