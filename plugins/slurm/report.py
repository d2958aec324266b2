"""Turn what was found about a job (its record, a hang trace, its log) into the one :class:`Result`."""

from __future__ import annotations

from dataclasses import asdict

from tracebot.plugin_api import (
    Attachment,
    CommandContext,
    LogScan,
    Result,
    Section,
    StackGroup,
    Table,
    code_span,
    combine_into,
    first_few,
    ranks_phrase,
)
from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.pyspy.render import PNG_MIN_RANKS, hosts_phrase, ranks_png, summarise_groups
from tracebot.plugins.pyspy.stacks_text import stacks_text
from tracebot.plugins.slurm.hang import HangTrace
from tracebot.plugins.slurm.jobinfo import JobView
from tracebot.plugins.slurm.states import describe_exit, final_state, pending_reason

MAX_ERROR_ROWS = 10


def job_label(job: JobView) -> str:
    return f"Job {job.display_id}" + (f" ({job.name})" if job.name else "")


def job_data(job: JobView) -> dict:
    data = asdict(job)
    # The sbatch command line can carry tokens (--export=WANDB_API_KEY=...): it is read, never repeated.
    data.pop("submit_line", None)
    data["base_state"] = job.base_state
    data["cancelled_by"] = job.cancelled_by
    return data


def pending(job: JobView) -> Result:
    why = pending_reason(job.reason or "None")
    asked = [f"partition {code_span(job.partition)}"] if job.partition else []
    if job.requested:
        asked.append(f"resources {code_span(job.requested)}")
    if job.num_nodes:
        asked.append(f"{job.num_nodes} node(s)")
    if job.time_limit:
        asked.append(f"time limit {job.time_limit}")
    if job.dependency:
        asked.append(f"dependency {code_span(job.dependency)}")
    summary = f"{job_label(job)} is PENDING: {why.meaning}."
    return Result(
        title=f"/trace job {job.display_id}", summary=summary, status="info",
        sections=[Section("Why it waits", f"Reason `{job.reason or 'None'}`: {why.meaning}.\n{why.advice}"),
                  Section("What it asked for", ", ".join(asked) or "nothing recorded")],
        data={"job": job_data(job), "state": "PENDING", "reason": job.reason,
              "reason_meaning": why.meaning, "advice": why.advice})


def finished(job: JobView) -> Result:
    info = final_state(job.state)
    detail = describe_exit(job.exit) if job.base_state in ("FAILED", "COMPLETED") or (job.exit and job.exit[0]) else ""
    if job.base_state == "CANCELLED":
        who = job.cancelled_by
        detail = f"by {who}" if who else "SLURM did not record by whom"
    state_words = f"{job.base_state}" + (f" ({detail})" if detail else "")
    summary = f"{job_label(job)} ended {state_words}: {info.meaning}."
    where = f" on {job.nodelist}" if job.nodelist else ""
    timing = f"Ran {job.elapsed or '?'}{where}; started {job.start or '?'}, ended {job.end or '?'}."
    return Result(
        title=f"/trace job {job.display_id}", summary=summary, status=info.status,
        sections=[Section("What it means", f"{info.meaning[0].upper()}{info.meaning[1:]}. {timing}"),
                  Section("What to do", info.advice)],
        tables=[_steps_table(job)] if job.steps else [],
        data={"job": job_data(job), "state": job.base_state, "state_detail": detail, "meaning": info.meaning,
              "advice": info.advice})


def running(job: JobView, nodes: list[str]) -> Result:
    count = len(nodes) or job.num_nodes or "?"
    summary = f"{job_label(job)} is {job.base_state} on {count} node(s) ({job.nodelist}) for {job.elapsed}."
    return Result(
        title=f"/trace job {job.display_id}", summary=summary, status="info",
        sections=[Section("Where", f"Nodes: {', '.join(nodes[:20]) or job.nodelist}{' …' if len(nodes) > 20 else ''}; "
                                   f"elapsed {job.elapsed} of {job.time_limit or '?'}; partition {job.partition}.")],
        tables=[_steps_table(job)] if job.steps else [],
        data={"job": job_data(job), "state": job.base_state, "nodes": nodes})


def _steps_table(job: JobView) -> Table:
    return Table("Steps", ["step", "name", "state", "nodes", "tasks", "elapsed"],
                 [[s.step_id, s.name, s.state, s.nodes, s.tasks, s.elapsed] for s in job.steps])


def add_hang_trace(result: Result, ctx: CommandContext, job: JobView, trace: HangTrace) -> Result:
    groups = group_stacks(trace.dumps, trace.hosts)
    unreadable = trace.unreadable
    result.stack_groups = groups
    result.unreadable = unreadable
    ranks = len(trace.dumps)
    line = summarise_groups(groups, unreadable)
    odd = [g for g in groups if g.odd_one_out]
    many_hosts = len(set(trace.hosts.values())) > 1
    if odd:
        rest = [g for g in groups if not g.odd_one_out]
        result.summary += f" Odd one out: {_group_phrase(odd, many_hosts)}; " + "; ".join(
            f"{ranks_phrase(g.ranks)} {'waits' if len(g.ranks) == 1 else 'wait'} in "
            f"{g.where.label() if g.where else '?'}" for g in rest) + "."
        result.status = "warning"
    elif groups:
        result.summary += f" Stacks: {line}."
    if trace.node_errors:  # ranks there are missing from the groups above: the summary must say so
        result.summary += " No dump from " + first_few(
            [f"node {node} ({why[:160]})" for node, why in trace.node_errors.items()], 3, sep="; ") + "."
    result.sections.append(Section(f"py-spy of {ranks} rank(s) in {trace.seconds:.1f}s", line))
    # Each group's stack is shown from result.stack_groups and the unreadable ranks from result.unreadable
    # by every view; repeating them as sections printed every stack twice.
    if trace.node_errors:
        result.sections.append(Section("Nodes not read", "\n".join(f"node {node}: {why}"
                                                                    for node, why in trace.node_errors.items())))
    result.data["hang"] = {"ranks": ranks, "pids": trace.pids, "hosts": trace.hosts,
                           "node_errors": trace.node_errors, "notes": trace.notes, "seconds": round(trace.seconds, 2),
                           "odd_ranks": [r for g in odd for r in g.ranks]}
    if ranks >= PNG_MIN_RANKS or (many_hosts and ranks > 1):  # across nodes, a picture even of a few ranks
        png = ranks_png(groups, unreadable, title=f"job {job.display_id}: {ranks} ranks by stack")
        result.attachments.append(Attachment(f"job-{job.job_id}-ranks.png", png, "image/png",
                                             "Ranks coloured by stack group"))
    return attach_record_matches(result, ctx, stacks_text(groups, unreadable))


def attach_record_matches(result: Result, ctx: CommandContext, text: str) -> Result:
    """Match a text tracebot wrote itself (stack summary, SLURM's record): its line numbers mean nothing."""
    found = ctx.match(text)
    for match in found.matches:
        match.line_no = None
    return combine_into(result, [found])


def _group_phrase(groups: list[StackGroup], with_hosts: bool = False) -> str:
    """``rank 5 on tbnode3 in load_next_batch (train.py:27)``; hosts only when the job spans several."""
    return "; ".join(f"{ranks_phrase(g.ranks)}{hosts_phrase(g.hosts) if with_hosts else ''} in "
                     f"{g.where.label() if g.where else '?'}" for g in groups)


def add_log(result: Result, ctx: CommandContext, scans: list[tuple[str, LogScan]]) -> Result:
    """Log files: first errors (file order, with line numbers and ranks) and the entries they match."""
    for label, scan in scans:
        name = f"{label} {code_span(scan.path)}"
        if scan.unreadable:
            result.sections.append(Section(f"Log ({label})", f"{name} could not be read: {scan.unreadable}."))
            result.data.setdefault("logs", []).append({"path": scan.path, "unreadable": scan.unreadable})
            continue
        rows = [[str(e.line_no) if e.line_no else "?", e.rank or "", e.host or "", e.text[:200]]
                for e in scan.errors[:MAX_ERROR_ROWS]]
        size = f"{scan.size / (1 << 20):,.1f} MB" if scan.size >= 1 << 20 else f"{scan.size:,} bytes"
        notes = "\n".join(scan.notes)
        if rows:
            result.tables.append(Table(f"First errors in {scan.path}", ["line", "rank", "host", "text"], rows))
            by_rank = {r: e for r, e in scan.first_by_rank.items() if r != "?"}
            if len(by_rank) > 1:
                firsts = sorted(by_rank.items(), key=lambda kv: kv[1].line_no or 0)
                notes = "First error per rank: " + ", ".join(
                    f"rank {r} line {e.line_no or '?'}" for r, e in firsts[:16]) + ("\n" + notes if notes else "")
        text = f"{name}, {size}: {len(scan.errors)} error line(s)" + (f"\n{notes}" if notes else "")
        result.sections.append(Section(f"Log ({label})", text))
        excerpt, line_nos = scan.excerpt()
        found = ctx.match(excerpt)
        for match in found.matches:
            match.line_no = _in_file(match.line_no, line_nos)
        if found.first_failure is not None:
            found.first_failure.line_no = _in_file(found.first_failure.line_no, line_nos) or 0
            found.first_failure.traceback_start = _in_file(found.first_failure.traceback_start, line_nos)
        combine_into(result, [found])
        result.data.setdefault("logs", []).append({
            "path": scan.path, "label": label, "size": scan.size, "truncated": scan.truncated,
            "errors": [asdict(e) for e in scan.errors[:MAX_ERROR_ROWS]], "notes": scan.notes,
            "lines": scan.lines_total})
    _lead_with_first_error(result, scans)
    return result


def _in_file(no: int | None, line_nos: list[int | None]) -> int | None:
    """A line number of the excerpt of candidate lines, as a line number of the log file."""
    return line_nos[no - 1] if no and 0 < no <= len(line_nos) else no


def _lead_with_first_error(result: Result, scans: list[tuple[str, LogScan]]) -> None:
    """Put the answer in the summary: the line a known root cause was found on, else the earliest
    error line (a traceback's header says nothing; its exception line does)."""
    cause = next((m for m in result.matches if m.confident and m.role == "root-cause" and m.line_no), None)
    if cause is not None:
        result.summary += f" Cause, line {cause.line_no}: {code_span(cause.line[:160])} — {cause.title} [{cause.entry_id}]."
        return
    errors = [(scan, e) for _, scan in scans for e in scan.errors if not e.starts_traceback]
    if errors:
        scan, error = min(errors, key=lambda pair: pair[1].line_no or 0)
        name = scan.path.rsplit("/", 1)[-1]
        who = " ".join(part for part in (f"rank {error.rank}" if error.rank else "",
                                         f"on {error.host}" if error.host else "") if part)
        result.summary += (f" First error, {name} line {error.line_no or '?'}{f' ({who})' if who else ''}: "
                           f"`{error.text[:160]}`.")
