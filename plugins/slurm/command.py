"""``/trace job <id>`` and ``/trace gpus <node>``: validate, authorize, ask SLURM, build the Result."""

from __future__ import annotations

import time
from typing import Any

from tracebot.plugin_api import Command, CommandContext, Result, Section, Table, UsageError, combine_into
from tracebot.plugins.slurm import gpus as gpu_check
from tracebot.plugins.slurm import logpaths, report
from tracebot.plugins.slurm import owner as owner_access
from tracebot.plugins.slurm.access import check_job_access, sees_all_commands, visible_ps
from tracebot.plugins.slurm.client import AccountingDown, ControllerDown, SlurmCli, SlurmError
from tracebot.plugins.slurm.hang import trace_job
from tracebot.plugins.slurm.ids import parse_job_id, parse_node
from tracebot.plugins.slurm.jobinfo import JobView, Lookup, lookup
from tracebot.plugins.slurm.settings import SlurmSettings
from tracebot.plugins.slurm.states import LIVE_STATES

JOB_USAGE = "/trace job <jobid>"
GPUS_USAGE = "/trace gpus <node>"
LOOKUP_BUDGET_S = 14.0  # "a controller that is down gets a clear answer within 15 s"
TRACEABLE = {"RUNNING"}


def parse_job(words: list[str]) -> dict[str, Any]:
    if len(words) != 1:
        raise UsageError("Give exactly one job id." if words else "Which job? Give its id.")
    return {"job_id": parse_job_id(words[0])}


def parse_gpus(words: list[str]) -> dict[str, Any]:
    if len(words) != 1:
        raise UsageError("Give exactly one node name." if words else "Which node? Give its name.")
    return {"node": parse_node(words[0])}


def _settings(ctx: CommandContext) -> SlurmSettings:
    return SlurmSettings.from_config(ctx.settings)


def _cli(settings: SlurmSettings) -> SlurmCli:
    return SlurmCli(bin_dir=settings.bin_dir, timeout_s=settings.command_timeout_s)


def run_job(ctx: CommandContext, job_id: str) -> Result:
    settings = _settings(ctx)
    cli = _cli(settings)
    title = f"/trace job {job_id}"
    ctx.progress(f"Asking SLURM about job {job_id}…")
    try:
        found = lookup(cli, job_id, accounting_timeout=min(LOOKUP_BUDGET_S / 2, max(1.0, ctx.remaining())))
    except ControllerDown as exc:
        return Result(title=title, summary=str(exc), status="error", data={"error": "controller_down"})
    except AccountingDown as exc:
        return Result(title=title, summary=f"The controller does not know job {job_id} (it never existed, or it "
                                           f"ended a while ago). {exc}", status="error",
                      data={"error": "accounting_down"})
    except SlurmError as exc:
        return Result(title=title, summary=f"SLURM could not be asked about job {job_id}: {exc}", status="error",
                      data={"error": "slurm"})
    if not found.jobs:
        return _not_found(title, job_id, found)
    for job in found.jobs:
        check_job_access(ctx.caller, job.user, job.display_id, settings, job.uid)
    if len(found.jobs) > 1:
        return _overview(title, job_id, found)
    result = describe(ctx, cli, settings, found.jobs[0])
    if found.controller_down:
        result.summary = f"{result.summary} (From accounting: the controller is not answering.)"
        result.sections.insert(0, Section("SLURM controller down", found.controller_down))
        result.data["controller_down"] = found.controller_down
    return result


def describe(ctx: CommandContext, cli: SlurmCli, settings: SlurmSettings, job: JobView) -> Result:
    """The report for one job record; a running job gets a hang trace, every started job its log."""
    if job.base_state == "PENDING":
        return report.pending(job)
    if job.base_state in TRACEABLE and job.source == "scontrol":
        nodes = cli.hostnames(job.nodelist) if job.nodelist else []
        result = report.running(job, nodes)
        ctx.progress(f"Dumping every rank of job {job.display_id} on {len(nodes)} node(s) with py-spy…")
        trace = trace_job(cli, job.job_id, nodes, settings,
                          deadline=time.monotonic() + max(2.0, ctx.remaining() - settings.log_budget_s / 2 - 3),
                          owner=job.user, uid=job.uid)
        if not trace.dumps and trace.node_errors:
            ended = _ended_meanwhile(ctx, cli, settings, job)
            if ended is not None:
                return ended
        report.add_hang_trace(result, ctx, job, trace)
    elif job.base_state in LIVE_STATES:
        result = report.running(job, [])
        if job.source == "sacct":
            why = "The controller is not answering, so the job's ranks cannot be reached through srun now."
        elif job.base_state in ("SUSPENDED", "STOPPED"):
            why = (f"The job is {job.base_state}: its processes are stopped on purpose, so their stacks say "
                   "nothing. `scontrol resume <id>` (admins) or `scontrol release` continues it.")
        else:
            why = (f"The job is {job.base_state}: its processes are being stopped or set up, so there is no "
                   "stack to take. Ask again in a minute for its final state.")
        result.sections.append(Section("No hang trace", why))
    else:
        result = report.finished(job)
        # The sacct line as people paste it, so entries about job states (triage) are matched too.
        code = f"{job.exit[0]}:{job.exit[1]}" if job.exit else "0:0"
        report.attach_record_matches(result, ctx, f"{job.display_id} {job.name or '-'} {job.partition or '-'} "
                                                  f"{job.user or '-'} {job.state} {code}")
    return _with_logs(ctx, result, job)


def _ended_meanwhile(ctx: CommandContext, cli: SlurmCli, settings: SlurmSettings, job: JobView) -> Result | None:
    """The job was running when asked but no node could be dumped: if it ended meanwhile, say so."""
    again = lookup(cli, job.asked)
    now = next((j for j in again.jobs if j.job_id == job.job_id), None)
    if now is None or now.base_state in TRACEABLE:
        return None
    result = describe(ctx, cli, settings, now)
    result.summary = f"{result.summary} It ended while tracebot was tracing it (it was {job.base_state} when asked)."
    result.data["ended_during_trace"] = True
    return result


def _with_logs(ctx: CommandContext, result: Result, job: JobView) -> Result:
    settings = _settings(ctx)
    budget = max(1.0, min(settings.log_budget_s, ctx.remaining() - 1.0))
    first_node = job.batch_host or (job.nodelist.split(",")[0] if "[" not in job.nodelist else "")
    scans = []
    opener = owner_access.log_opener(settings, job.job_id, job.user, job.uid)  # the owner's rights, never more
    for label, path in logpaths.candidates(job, first_node)[:4]:
        ctx.progress(f"Searching {path} for the first errors…")
        scans.append((label, ctx.scan_log(path, budget_s=budget, opener=opener)))
    if not scans:
        result.sections.append(Section("Log", "SLURM has no output file for this job (StdOut is /dev/null)."))
        return result
    if job.source == "sacct":
        result.data.setdefault("notes", []).append(
            "the controller no longer knows this job: its log path comes from the sbatch command line in "
            "accounting (an `#SBATCH -o` inside the script is not recorded there by Slurm 22.05)")
    return report.add_log(result, ctx, scans)


def _not_found(title: str, job_id: str, found: Lookup) -> Result:
    if found.controller_down:
        return Result(title=title, summary=f"{found.controller_down} Accounting (sacct) has no job {job_id} either.",
                      status="error", data={"error": "controller_down"})
    return Result(title=title, summary=f"No job {job_id}: neither the controller nor accounting knows it. "
                                       "Check the id (`squeue -u $USER`, `sacct -u $USER`).",
                  status="error", data={"error": "no_such_job"})


def _overview(title: str, job_id: str, found: Lookup) -> Result:
    rows = [[j.display_id, j.name, j.state, j.reason or "", j.nodelist, j.elapsed] for j in found.jobs]
    return Result(title=title, summary=f"{job_id} has {len(found.jobs)} parts (array tasks or het components). "
                                       f"Trace one of them, e.g. `/trace job {found.jobs[0].display_id}`.",
                  status="info", tables=[Table("Parts", ["id", "name", "state", "reason", "nodes", "elapsed"], rows)],
                  data={"parts": [report.job_data(j) for j in found.jobs]})


def run_gpus(ctx: CommandContext, node: str) -> Result:
    settings = _settings(ctx)
    title = f"/trace gpus {node}"
    try:
        view = gpu_check.inspect_node(node, settings, timeout=min(settings.command_timeout_s, ctx.remaining()))
    except gpu_check.NodeUnreachable as exc:
        return Result(title=title, summary=f"Could not check the GPUs of {node}: {exc}", status="error",
                      data={"error": "unreachable"})
    left = gpu_check.orphans(view.processes, view.job_of_pid)
    ps = visible_ps(view.details, ctx.caller, sees_all_commands(ctx.caller, node, settings))
    rows = [[str(p.pid), p.process_name, f"{p.used_mib} MiB" if p.used_mib is not None else "?", p.gpu_uuid,
             view.job_of_pid.get(p.pid, "none: left over"), ps.get(p.pid, "")] for p in view.processes]
    data = {"node": node, "processes": [p.__dict__ for p in view.processes],
            "orphans": [p.pid for p in left], "job_of_pid": {str(k): v for k, v in view.job_of_pid.items()}}
    tables = [Table(f"GPU processes on {node}", ["pid", "process", "memory", "gpu", "job", "ps"], rows)]
    if not left:
        summary = (f"No GPU processes on {node}." if not view.processes else
                   f"All {len(view.processes)} GPU process(es) on {node} belong to running jobs.")
        return Result(title=title, summary=summary, status="ok", tables=tables, data=data)
    pids = " ".join(str(p.pid) for p in left)
    stuck = [p.pid for p in left if p.pid in view.details and "D" in _ps_field(view.details[p.pid].text, 2)]
    held = ", ".join(f"pid {p.pid} ({p.process_name}, {p.used_mib if p.used_mib is not None else '?'} MiB)" for p in left)
    fix = [f"`ssh {node} kill {pids}`; if they are still listed after a few seconds: `ssh {node} kill -9 {pids}`.",
           f"Check again: `ssh {node} nvidia-smi` should no longer list them before jobs are scheduled there."]
    if stuck:
        fix.append(f"pid {', '.join(map(str, stuck))} is in uninterruptible sleep (D): kill cannot end it; the admins "
                   "must reset the GPU or drain and reboot the node.")
    result = Result(title=title, status="warning", tables=tables, data=data,
                    summary=f"{len(left)} GPU process(es) on {node} belong to no running job (left over from a job "
                            f"that is gone): {held}.",
                    sections=[Section("To clear them", "\n".join(fix))])
    return combine_into(result, [ctx.match(f"nvidia-smi on {node} shows a process holding GPU memory but there is no "
                                       "job running for it on the node (zombie process holding GPU memory)")])


def _ps_field(details: str, index: int) -> str:
    """A field of ``user etime stat args`` (the ps columns gpus asks for)."""
    fields = details.split()
    return fields[index] if len(fields) > index else ""


def dedupe_job(parsed: dict[str, Any]) -> str:
    return f"slurm-job:{parsed['job_id']}"


JOB_COMMAND = Command(
    name="job", usage=JOB_USAGE,
    help="What happened to a SLURM job: pending reason, final state and advice, first log errors, and a "
         "py-spy hang trace of every rank of a running job.",
    parse=parse_job, run=run_job, timeout_s=90.0, dedupe_key=dedupe_job)

GPUS_COMMAND = Command(
    name="gpus", usage=GPUS_USAGE,
    help="GPU processes on a node that belong to no running job (zombies holding GPU memory), and how to clear them.",
    parse=parse_gpus, run=run_gpus, timeout_s=30.0, dedupe_key=lambda p: f"slurm-gpus:{p['node']}")
