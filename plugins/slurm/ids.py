"""Validation of what a user may type as a SLURM job id or node name, before any command runs.

Only these shapes are accepted: a plain job id (``123``), an array task (``123_4``) and a
heterogeneous job component (``123+1``). Everything else is refused with a message saying so.
"""

from __future__ import annotations

import re

from tracebot.plugin_api import UsageError

JOB_ID = re.compile(r"[1-9][0-9]{0,9}(?:_[0-9]{1,7}|\+[0-9]{1,3})?")
# Host names as SLURM prints them (letters, digits, dots, dashes, underscores), no leading dash.
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_SHOWN = 40  # how much of a refused argument is echoed back


def parse_job_id(word: str) -> str:
    if not JOB_ID.fullmatch(word):
        raise UsageError(
            f"{word[:_SHOWN]!r} is not a SLURM job id. Use a number (`123`), an array task (`123_4`) "
            "or a heterogeneous job component (`123+1`)."
        )
    return word


def parse_node(word: str) -> str:
    if not NODE_NAME.fullmatch(word):
        raise UsageError(f"{word[:_SHOWN]!r} is not a node name (letters, digits, `.`, `-`, `_`).")
    return word
