"""``/trace pid <pid> [--host H] [--native]``: dump a process (and its ranks) with py-spy and group the stacks."""

from __future__ import annotations

import re
import socket
import subprocess
from typing import Any

from tracebot.plugin_api import (
    Command,
    CommandContext,
    Frame,
    NotAllowed,
    Result,
    Table,
    UsageError,
    start_time,
)
from tracebot.plugins.pyspy import procs
from tracebot.plugins.pyspy.dump import (
    DEFAULT_MAX_WORKERS,
    DEFAULT_TIMEOUT_S,
    ProcessDump,
    dump_many,
    find_pyspy,
)
from tracebot.plugins.pyspy.report import add_stack_report

USAGE = "/trace pid <pid> [--host H] [--native]"
PID_MAX = 4_194_304  # the kernel's upper bound for pid_max
_PID = re.compile(r"^[0-9]{1,7}$")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
DEFAULT_SSH = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]


def parse(words: list[str]) -> dict[str, Any]:
    """Validate everything before any process is started; refuse rather than guess."""
    pid: int | None = None
    host: str | None = None
    native = False
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word == "--native":
            native = True
        elif word == "--host" or word.startswith("--host="):
            value = word.split("=", 1)[1] if "=" in word else (rest.pop(0) if rest else "")
            if not _HOST.match(value):
                raise UsageError(f"--host needs a host name (letters, digits, dots, dashes), got {value[:60]!r}.")
            host = value
        elif word.startswith("-"):
            raise UsageError(f"Unknown option {word[:40]!r}.")
        elif pid is None:
            if not _PID.match(word) or not 1 <= int(word) <= PID_MAX:
                raise UsageError(f"A pid is a number from 1 to {PID_MAX}, got {word[:40]!r}.")
            pid = int(word)
        else:
            raise UsageError(f"Unexpected argument {word[:40]!r}: one pid at a time.")
    if pid is None:
        raise UsageError("Which process? Give its pid.")
    return {"pid": pid, "host": host, "native": native}


def run(ctx: CommandContext, pid: int, host: str | None = None, native: bool = False) -> Result:
    settings = ctx.settings
    where = f" on {host}" if host else f" on {socket.gethostname()}"
    title = f"py-spy: pid {pid}{where}"
    remote = remote_prefix(settings, host) if host else None
    remote_start: str | None = None
    if remote:
        remote_start = _check_remote_owner(ctx, remote, pid)
        targets, left_out = [procs.Target(pid, f"pid {pid}")], []  # only the pid itself is dumped there
        started: dict[int, int | None] = {}
    else:
        if not procs.exists(pid):
            return Result(title=title, summary=f"No process {pid}{where}.", status="error",
                          data={"error": "no_such_process", "pid": pid})
        found = procs.targets(pid)
        started = {t.pid: start_time(t.pid) for t in found}  # before the check: a pid reused after it differs
        _check_owner(ctx, pid)
        targets, left_out = _own_targets(ctx, found)
        if not targets:
            return Result(title=title, status="error",
                          data={"error": "not_yours", "pid": pid, "left_out": len(left_out)},
                          summary=f"All {len(left_out)} process(es) to dump under pid {pid} run as another user "
                                  f"(changed user through setuid or sudo): {_LEFT_OUT_WHY}")
    dumps = _dump(ctx, settings, targets, native, remote)
    if remote and remote_start is not None and _remote_changed(ctx, remote, pid, remote_start):
        return Result(title=title, status="error", data={"error": "not_yours", "pid": pid, "host": host},
                      summary=f"Process {pid}{where} became another user's, or ended and its pid went to another "
                              f"process, while py-spy read it: nothing of that read is shown. {_LEFT_OUT_WHY}")
    if not remote and not ctx.caller.is_admin:
        changed = _changed_since_checked(ctx, targets, started)
        targets = [t for t in targets if t not in changed]
        left_out += changed
        for target in changed:
            del dumps[target.label]  # read after it became another user's (setuid exec, pid reused)
    result = Result(title=title, summary="")
    if left_out:
        result.data["left_out"] = len(left_out)
        result.data.setdefault("notes", []).append(
            f"{len(left_out)} process(es) under pid {pid} left out: they run as another user (changed user "
            f"through setuid or sudo). {_LEFT_OUT_WHY}")
    hosts = {t.label: host for t in targets} if host else None
    result.summary = add_stack_report(result, ctx, dumps, hosts,
                                      png_title=f"{len(targets)} ranks of pid {pid} by stack")
    groups = result.stack_groups
    result.status = "error" if not groups else (
        "warning" if result.unreadable or any(g.odd_one_out for g in groups) else "ok")
    if len(targets) > 1:  # which pid is which rank, for whoever goes on to kill or gdb one
        result.tables = [Table("Processes", ["rank", "pid"], [[t.label, str(t.pid)] for t in targets])]
    result.data.update({"pid": pid, "host": host, "native": native,
                        "processes": {t.label: t.pid for t in targets}})
    return result


def _dump(ctx: CommandContext, settings: dict[str, Any], targets: list[procs.Target], native: bool,
          remote: list[str] | None) -> dict[str, list[Frame] | str]:
    pyspy = [str(settings.get("remote_path", "py-spy"))] if remote else find_pyspy(settings.get("path"))
    timeout = min(float(settings.get("timeout", DEFAULT_TIMEOUT_S)), max(1.0, ctx.remaining() - 1.0))
    ctx.progress(f"Dumping {len(targets)} process{'es' if len(targets) > 1 else ''} with py-spy…")
    raw = dump_many([t.pid for t in targets], native=native, timeout=timeout, pyspy=pyspy, remote=remote,
                    max_workers=int(settings.get("max_workers", DEFAULT_MAX_WORKERS)))
    dumps: dict[str, list[Frame] | str] = {}
    for target in targets:
        outcome = raw[target.pid]
        dumps[target.label] = outcome.frames if isinstance(outcome, ProcessDump) else f"pid {target.pid}: {outcome}"
    return dumps


_LEFT_OUT_WHY = "You may trace only your own processes; an admin can trace them."


def _caller_uid(ctx: CommandContext) -> int:
    """The caller's uid, for a caller who is not an admin; refused when there is none."""
    if not ctx.caller.cluster_user:
        raise NotAllowed("Your Slack user is not mapped to a cluster user, so you may not trace processes; "
                         "ask an admin to add you to the users mapping.")
    uid = ctx.caller.cluster_uid
    if uid is None:
        raise NotAllowed(f"Your cluster user {ctx.caller.cluster_user} is not known on this host, so which "
                         "processes are yours cannot be checked.")
    return uid


def _check_owner(ctx: CommandContext, pid: int) -> None:
    if ctx.caller.is_admin:
        return
    if not procs.owned_by(pid, _caller_uid(ctx)):
        raise NotAllowed(f"Process {pid} is not yours ({ctx.caller.cluster_user}); "
                         "you may trace only your own processes.")


def _own_targets(ctx: CommandContext, found: list[procs.Target]) -> tuple[list[procs.Target], list[procs.Target]]:
    """py-spy dumps the ranks and children under the pid too: each must be the caller's, not only the
    pid asked for (a rank may have changed user since). Admins trace them all."""
    if ctx.caller.is_admin:
        return found, []
    return procs.split_by_owner(found, _caller_uid(ctx))


def _changed_since_checked(ctx: CommandContext, targets: list[procs.Target],
                           started: dict[int, int | None]) -> list[procs.Target]:
    """The dumped processes that are no longer the caller's, or no longer the process that was checked:
    between the check and py-spy a process can exec a setuid program, or exit and have its pid reused."""
    uid = _caller_uid(ctx)
    changed = []
    for target in targets:
        now = start_time(target.pid)
        # one that exited meanwhile keeps its dump (or py-spy's reason): it was the one checked while it ran
        if now is not None and (now != started.get(target.pid) or not procs.owned_by(target.pid, uid)):
            changed.append(target)
    return changed


def remote_prefix(settings: dict[str, Any], host: str) -> list[str]:
    if not settings.get("ssh"):
        raise UsageError("Tracing on another host (--host) is not enabled here; an admin can enable it "
                         "with `pyspy: {ssh: true}` in TRACEBOT_CONFIG.")
    ssh = settings.get("ssh_command") or DEFAULT_SSH
    # ssh joins the remote words into one shell line: only validated words (host, pid, fixed flags)
    # and the admin's configured py-spy path ever reach it.
    return [*map(str, ssh), "--", host]


def _remote_identity(ctx: CommandContext, remote: list[str], pid: int) -> tuple[list[str], str]:
    """``pid``'s four uids and start time on the other host, as its ``ps`` says (([], "") when it is not running)."""
    try:
        # uids, not `user=`: ps cuts a long user name to "longuse+"; all four, as procs.owned_by checks
        proc = subprocess.run([*remote, "ps", "-o", "ruid=,euid=,suid=,fsuid=,lstart=", "-p", str(pid)],
                              capture_output=True, text=True, timeout=min(15.0, max(1.0, ctx.remaining())), check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotAllowed(f"Could not check who owns process {pid} on that host ({type(exc).__name__}).") from exc
    found = proc.stdout.split()
    return (found[:4], " ".join(found[4:])) if len(found) > 4 else ([], "")


def _check_remote_owner(ctx: CommandContext, remote: list[str], pid: int) -> str | None:
    """Refuses a process on the other host that is not the caller's; returns its start time (None for admins)."""
    if ctx.caller.is_admin:
        return None
    uids, start = _remote_identity(ctx, remote, pid)
    if uids != [str(_caller_uid(ctx))] * 4:
        raise NotAllowed(f"Process {pid} on that host is not yours or does not exist; "
                         "you may trace only your own processes.")
    return start


def _remote_changed(ctx: CommandContext, remote: list[str], pid: int, start: str) -> bool:
    """The process on the other host is no longer the one checked (another user's now, or its pid reused since):
    between the check and py-spy it can exec a setuid program, or exit and have its pid taken by another's."""
    uids, now = _remote_identity(ctx, remote, pid)
    # one that exited meanwhile keeps its dump (or py-spy's reason): it was the one checked while it ran
    return bool(uids) and (now != start or uids != [str(_caller_uid(ctx))] * 4)


def dedupe_key(parsed: dict[str, Any]) -> str:
    return f"pid:{parsed.get('host') or ''}:{parsed['pid']}:{int(bool(parsed.get('native')))}"


PID_COMMAND = Command(
    name="pid", usage=USAGE,
    help="Dump a process (or a launcher's ranks) with py-spy; group identical stacks and say where each is stuck.",
    parse=parse, run=run, timeout_s=60.0, dedupe_key=dedupe_key,
)
