"""Fill the ``/trace`` suggestions of an entry from the pasted text: ``/trace job <jobid>`` becomes
``/trace job 4411`` when the log names its SLURM job. Only unambiguous mentions count; a
suggestion whose placeholder stays unfilled is not shown (``UNFILLED``)."""

from __future__ import annotations

import re

_JOB_ID = [
    re.compile(
        r"\*\*\* (?:JOB|STEP) (\d+)(?:\.\d+)? ON \S+"
    ),  # slurmstepd: error: *** JOB 4411 ON gpu7 CANCELLED
    re.compile(r"\bSLURM_JOB_ID[=: ]+(\d+)\b"),
    re.compile(r"\bslurm-(\d+)(?:_\d+)?\.out\b"),
    re.compile(r"\bjob(?:[ _]?id)?[ =:#]+(\d{2,12})\b", re.IGNORECASE),
]
_TRAINING_JOB = re.compile(r"\bTrainingJobName[\"' =:]+([A-Za-z0-9][A-Za-z0-9-]{0,62})")
UNFILLED = re.compile(r"<[a-z][a-z-]*>")  # a placeholder no value from the text replaced
_NODE = re.compile(r"\b(?:node|host)[ =:]+([a-z][a-z0-9-]{1,62}\d)\b")


def _single(pattern: re.Pattern[str], text: str) -> str | None:
    found = {m.group(1) for m in pattern.finditer(text)}
    return found.pop() if len(found) == 1 else None


def placeholders(text: str) -> dict[str, str]:
    """``{"<jobid>": "4411", ...}`` for what the text names exactly once."""
    values: dict[str, str] = {}
    for pattern in _JOB_ID:
        job = _single(pattern, text)
        if job:
            values["<jobid>"] = job
            break
    training = _single(_TRAINING_JOB, text)
    if training:
        values["<training-job-name>"] = training
    node = _single(_NODE, text)
    if node:
        values["<node>"] = node
    return values


def fill(command: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        command = command.replace(placeholder, value)
    return command
