"""Who may trace which job: admins any job; everyone else only jobs of the cluster user their Slack
user is mapped to (``users:`` in TRACEBOT_CONFIG), unless ``slurm.anyone_may_trace`` is set. Who sees
whose command lines in ``/trace gpus``: admins and ``slurm.gpus.allow`` grants all, others their own."""

from __future__ import annotations

import fnmatch
import grp
import pwd

from tracebot.plugin_api import Caller, NotAllowed
from tracebot.plugins.slurm.gpus import PsRow
from tracebot.plugins.slurm.settings import SlurmSettings


def check_job_access(caller: Caller, owner: str, job_id: str, settings: SlurmSettings,
                     uid: int | None = None) -> None:
    """``owner`` and ``uid`` are SLURM's for the job. Where SLURM gives the uid and the caller's cluster user is
    known here, the uids decide: the name alone let a reused or renamed name trace the jobs its former holder
    left in the controller and accounting."""
    if caller.is_admin or settings.anyone_may_trace:
        return
    if not caller.cluster_user:
        raise NotAllowed("Your Slack user is not mapped to a cluster user, so you may not trace jobs; "
                         "ask an admin to add you to the `users:` mapping.")
    mine = uid == caller.cluster_uid if uid is not None and caller.cluster_uid is not None else None
    if mine is False or (mine is None and owner != caller.cluster_user):
        raise NotAllowed(f"Job {job_id} is not yours ({caller.cluster_user}); you may trace only your own "
                         "jobs. Ask its owner or an admin.")


HIDDEN = "(command line hidden: not your process; admins and `slurm.gpus.allow` grants see it)"


def sees_all_commands(caller: Caller, node: str, settings: SlurmSettings) -> bool:
    """``/trace gpus``: may the caller see other users' command lines on ``node``? Admins may; so may a
    Slack user id, cluster user or ``@unix-group`` granted a node pattern in ``slurm.gpus.allow``."""
    if caller.is_admin:
        return True
    keys = {caller.slack_user, caller.cluster_user, *(f"@{g}" for g in _unix_groups(caller.cluster_user))}
    return any(fnmatch.fnmatchcase(node, pattern) for key in keys if key
               for pattern in settings.gpus_allow.get(key, []))


def visible_ps(details: dict[int, PsRow], caller: Caller, sees_all: bool) -> dict[int, str]:
    """``user etime stat args`` per pid, with the args of other users' processes hidden unless ``sees_all``.
    A process is the caller's when its uid is the caller's (names in ps output may be cut short)."""
    if sees_all:
        return {pid: row.text for pid, row in details.items()}
    uid = caller.cluster_uid
    shown = {}
    for pid, row in details.items():
        mine = uid is not None and row.uid == uid
        shown[pid] = row.text if mine else " ".join([*row.text.split(maxsplit=3)[:3], HIDDEN])
    return shown


def _unix_groups(user: str | None) -> set[str]:
    if not user:
        return set()
    try:
        primary = grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name
    except KeyError:
        return set()
    return {primary} | {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
