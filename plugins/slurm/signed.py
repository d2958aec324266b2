"""The one line a node's dump signs, so that a job cannot pass off a document of its own as its node's dump.

The dump step runs as the job's owner, on the job's node, and its output is a pipe any process of the job can
open through ``/proc/<pid>/fd/1`` while the dumper is an ordinary process of that user: last round's parser took
the last JSON line of the output, so a job could report invented ranks, frames, or "all ranks fine". Now:

- tracebot makes a fresh random key for each node's dump and writes it to the step's stdin (never its argv or
  environment, which the job's processes can read in /proc);
- the dumper first locks itself (:func:`lock`: undumpable, so the owner's other processes can no longer open its
  descriptors, read its memory or environment, or ptrace it), refuses to go on if something already traces it,
  and only then reads the key;
- it prints its document as one line, ``tracebot-node-dump <HMAC-SHA256 of the JSON, hex> <JSON>``, and tracebot
  takes the one line whose MAC verifies under the key it sent (:func:`read_signed`); every other line was written
  by someone else and is only counted.

The privilege closes even the instant before the lock: it runs the dump with an execute-only copy of the
interpreter, which Linux makes undumpable from its first instruction (scripts/deploy/install-privilege.sh). What
is left (README "Deploying", threat model): where the job's owner has processes on tracebot's host, they can
ptrace the srun the privilege runs as that owner and read the key there; and a dump started with a readable
interpreter can have its stdin opened in its first instant. A document signed with a stolen key is still refused
unless the dumper's own signed line never reaches tracebot, as two signed documents are.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

WORD = "tracebot-node-dump"
KEY = re.compile(r"[0-9a-f]{64}")
_PR_SET_DUMPABLE = 4


def new_key() -> str:
    return secrets.token_hex(32)


def _mac(key: str, body: str) -> bytes:
    return hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest().encode()


def sign(key: str, doc: dict[str, Any]) -> str:
    """``doc`` as the one signed line (ASCII JSON: a frame's name cannot break the line)."""
    body = json.dumps(doc, ensure_ascii=True)
    return f"{WORD} {_mac(key, body).decode()} {body}"


@dataclass
class Signed:
    docs: list[dict[str, Any]] = field(default_factory=list)  # the documents signed with the key
    foreign: int = 0  # other non-empty lines: someone else wrote them into the step's output


def read_signed(key: str, out: str) -> Signed:
    found = Signed()
    for line in out.split("\n"):
        if not line.strip():
            continue
        word, _, rest = line.partition(" ")
        mac, _, body = rest.partition(" ")
        doc = None
        if word == WORD and hmac.compare_digest(mac.encode(errors="replace"), _mac(key, body)):
            try:
                doc = json.loads(body)
            except (ValueError, RecursionError):
                doc = None
        if isinstance(doc, dict):
            found.docs.append(doc)
        else:
            found.foreign += 1
    return found


class Unlocked(RuntimeError):
    """The dumper could not make itself safe from the job's processes; it signs nothing."""


def lock() -> None:
    """Make this process undumpable (``prctl(PR_SET_DUMPABLE, 0)``): its ``/proc/<pid>/fd``, ``environ`` and
    ``mem`` are then closed to processes of the same user, and they can no longer ptrace it. Children inherit it
    until they exec (py-spy, execed, is an ordinary process again: it never sees the key). Refuses when a tracer
    is attached already (it attached before the lock, and would read the key as it arrives)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise Unlocked(f"prctl(PR_SET_DUMPABLE) failed (errno {ctypes.get_errno()})")
    tracer = tracer_pid()
    if tracer:
        raise Unlocked(f"process {tracer} is tracing the dump step (it attached before the dump locked itself)")


def tracer_pid(status: Path = Path("/proc/self/status")) -> int:
    for line in status.read_text().splitlines():
        if line.startswith("TracerPid:"):
            return int(line.split(":", 1)[1])
    return 0


def read_key(stream: IO[bytes]) -> str:
    """The key tracebot wrote to the step's stdin: one line of 64 hex digits."""
    key = stream.readline(100).decode("ascii", errors="replace").strip()
    if not KEY.fullmatch(key):
        raise ValueError("no signing key arrived on stdin (tracebot writes one there; a `slurm.as_owner` privilege "
                         "older than this tracebot passes none: reinstall it, README \"Deploying\")")
    return key
