"""The values an entry's regex may read off an error line: the names its named groups may carry.

An entry regex such as ``WorkNCCL\\(SeqNum=(?P<seq>\\d+), OpType=(?P<collective>\\w+)`` both recognises the
error and names the values in it; the matcher returns them on the match (``Match.facts``) and every view
labels them in the reader's language (``tracebot.render.messages``, key ``fact.<name>``). A group whose
name is not listed here is a load error, so a typo never silently drops a value from the answer.
CONTRIBUTING.md documents the same list for authors.
"""

from __future__ import annotations

import re

# name -> what the value is (an example in brackets). Order is the order a reader wants them in.
FACT_NAMES: dict[str, str] = {
    "requested": "memory the failed allocation asked for (20.00 MiB)",
    "gpu": "the GPU's index on its node (3)",
    "capacity": "the GPU's total memory (79.15 GiB)",
    "free": "memory free on the GPU when it failed (3.06 MiB)",
    "in_use": "memory this process held on the GPU (79.13 GiB)",
    "other_pid": "PID of another process holding memory on the same GPU (48211)",
    "other_held": "memory that other process held (61.00 GiB)",
    "collective": "the collective that timed out, NCCL's OpType (ALLREDUCE)",
    "seq": "the collective's sequence number, NCCL's SeqNum (90211)",
    "ran_for": "how long the collective ran before the watchdog stopped it, in milliseconds (600043)",
    "timeout": "the process group's timeout, in milliseconds (600000)",
    "port": "the TCP port that was taken or refused (29500)",
    "job": "the SLURM job (or job step) id (4512 or 4512.0)",
    "node": "the node (host) named by the line (gpu-07)",
    "reason": "why the scheduler ended the job (DUE TO TIME LIMIT)",
    "exit_code": "a process's exit code (-9)",
    "signal": "the signal that ended a process (SIGKILL)",
}
MILLISECOND_FACTS = frozenset({"ran_for", "timeout"})  # shown as seconds or minutes
_ALTERNATIVE = re.compile(r"_\d+$")


def fact_name(group: str) -> str:
    """The value a named group reads: its name, less a ``_2``-style suffix (regexes cannot name two groups
    alike, so a value read by two alternatives of one regex is ``free`` in one and ``free_2`` in the other)."""
    return _ALTERNATIVE.sub("", group)
