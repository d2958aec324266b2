"""Who may trace which job: admins any job; everyone else only jobs of the cluster user their Slack
user is mapped to (``users:`` in TRACEBOT_CONFIG), unless ``slurm.anyone_may_trace`` is set."""

from __future__ import annotations

from tracebot.plugin_api import Caller, NotAllowed
from tracebot.plugins.slurm.settings import SlurmSettings


def check_job_access(caller: Caller, owner: str, job_id: str, settings: SlurmSettings) -> None:
    if caller.is_admin or settings.anyone_may_trace:
        return
    if not caller.cluster_user:
        raise NotAllowed("Your Slack user is not mapped to a cluster user, so you may not trace jobs; "
                         "ask an admin to add you to the `users:` mapping.")
    if owner != caller.cluster_user:
        raise NotAllowed(f"Job {job_id} is not yours ({caller.cluster_user}); you may trace only your own "
                         "jobs. Ask its owner or an admin.")
