"""Who may read a training job's CloudWatch error lines: admins, and the grants in TRACEBOT_CONFIG.

A job's logs belong to its team, and tracebot reads them with its own AWS identity, so nobody else may
see them through tracebot. The plugin's section of TRACEBOT_CONFIG grants job-name glob patterns to
Slack user ids or to groups of them::

    sagemaker:
      groups: {team-a: [U0ALICE, U0BOB]}
      allow:
        team-a: ["team-a-*"]        # a group
        U0CAROL: ["carol-sweep-*"]  # one Slack user
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from tracebot.plugin_api import Caller


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple | set) else []


def granted_patterns(caller: Caller, settings: Mapping[str, Any]) -> list[str]:
    """The job-name patterns granted to ``caller`` directly or through a group (none without a Slack user)."""
    if not caller.slack_user:
        return []
    allow = settings.get("allow")
    groups = settings.get("groups")
    if not isinstance(allow, Mapping):
        return []
    keys = {caller.slack_user}
    if isinstance(groups, Mapping):
        keys |= {str(name) for name, members in groups.items() if caller.slack_user in _names(members)}
    return [pattern for key, patterns in allow.items() if str(key) in keys for pattern in _names(patterns)]


def may_read(caller: Caller, settings: Mapping[str, Any], job_name: str) -> bool:
    """Admins may read every job; others only jobs whose name matches a pattern granted to them."""
    if caller.is_admin:
        return True
    return any(fnmatch.fnmatchcase(job_name, pattern) for pattern in granted_patterns(caller, settings))
