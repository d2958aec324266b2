"""Read a training job's CloudWatch Logs streams, one per host, within fixed bounds.

SageMaker writes each host's output to the log group ``/aws/sagemaker/TrainingJobs`` in a stream named
``<job-name>/algo-<n>-<epoch-seconds>``. Every stream is read from its head, page by page
(``nextForwardToken`` until it comes back unchanged, which is how CloudWatch says "end of stream"),
up to a byte/event budget; when the budget runs out the last page of the stream is read too, because
the error that ended a job is at the end of its log.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LOG_GROUP = "/aws/sagemaker/TrainingJobs"

# Lines worth showing as "first errors": exception lines, explicit error levels, NCCL and process-death
# markers. Only a summary for humans; the knowledge base does the diagnosing.
_ERROR_LINE = re.compile(
    r"\b\w*(?:Error|Exception)\b\s*:"
    r"|\b(?:ERROR|FATAL|CRITICAL)\b"
    r"|NCCL WARN"
    r"|Watchdog caught collective operation timeout"
    r"|\bSegmentation fault\b|terminate called after"
    r"|uncorrectable ECC"
    r"|\bnccl\w+Error\b"
    r"|\bexitcode\s*:\s*-?[1-9]"
)
_STREAM_HOST = re.compile(r"^(?P<host>.+?)-\d{9,}$")
_MPI_TAG_HOST = re.compile(r"^\[\d+,mpirank:\d+,(?P<host>[\w.-]+)\]<std(?:out|err)>")


@dataclass
class LogLimits:
    max_streams: int = 128
    page_events: int = 10_000
    max_pages_per_stream: int = 50
    max_bytes_per_stream: int = 4 * 1024 * 1024
    max_bytes_total: int = 24 * 1024 * 1024
    tail_events: int = 2_000
    first_errors_per_host: int = 3
    min_seconds_left: float = 3.0  # stop reading when less than this remains before the deadline


@dataclass
class HostLog:
    host: str
    stream: str
    events: list[tuple[int, str]] = field(default_factory=list)  # (timestamp ms, message), in order
    bytes_read: int = 0
    truncated: bool = False  # the middle of the stream was skipped (head budget spent, tail read)


@dataclass
class JobLogs:
    hosts: list[HostLog] = field(default_factory=list)
    streams_total: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_read(self) -> int:
        return sum(h.bytes_read for h in self.hosts)

    def lines(self) -> list[tuple[int, str, str, bool]]:
        """Every line of every stream as (timestamp ms, host, line, host-tagged), merged by time.

        Under mpirun, SageMaker's algo-1 stream carries every host's output, each line tagged
        ``[1,mpirank:9,algo-2]<stderr>:``; such a line belongs to the host in its tag, not to algo-1.
        """
        merged = []
        for order, h in enumerate(self.hosts):
            for ts, message in h.events:
                for line in message.splitlines() or [""]:
                    tag = _MPI_TAG_HOST.match(line)
                    merged.append((ts, order, tag.group("host") if tag else h.host, line, tag is not None))
        merged.sort(key=lambda t: (t[0], t[1]))
        return [(ts, host, line, tagged) for ts, _, host, line, tagged in merged]

    def combined_text(self) -> str:
        """All lines for the matcher, each with its host (``algo-2: ``, or the mpirun tag it has)."""
        return "\n".join(line if tagged else f"{host}: {line}" for _, host, line, tagged in self.lines())

    def first_errors(self, limit: int) -> dict[str, list[tuple[int, str]]]:
        """Up to ``limit`` distinct error lines per host, in time order; hosts without any map to []."""
        found: dict[str, list[tuple[int, str]]] = {h.host: [] for h in self.hosts}
        for ts, host, line, _tagged in self.lines():
            line = line.rstrip()
            seen = found.setdefault(host, [])
            if len(seen) < limit and _ERROR_LINE.search(line) and all(line != old for _, old in seen):
                seen.append((ts, line))
        return found


def host_of(stream: str, job_name: str) -> str:
    """``job/algo-2-1700000000`` -> ``algo-2``; unknown shapes keep their full suffix."""
    suffix = stream[len(job_name) + 1 :] if stream.startswith(job_name + "/") else stream
    m = _STREAM_HOST.match(suffix)
    return m.group("host") if m else suffix


def read_job_logs(
    logs: Any, job_name: str, remaining: Callable[[], float], limits: LogLimits | None = None
) -> JobLogs:
    """Read every host's stream of ``job_name``. AWS errors propagate to the caller."""
    limits = limits or LogLimits()
    result = JobLogs()
    streams = _list_streams(logs, job_name, limits, result)
    budget = limits.max_bytes_total
    for stream in streams:
        if remaining() < limits.min_seconds_left:
            result.notes.append(
                f"Stopped reading logs at the deadline; {stream} and later streams were not read."
            )
            break
        if budget <= 0:
            result.notes.append(
                f"Log budget of {limits.max_bytes_total} bytes spent; {stream} and later not read."
            )
            break
        host_log = _read_stream(logs, stream, host_of(stream, job_name), remaining, limits, budget)
        budget -= host_log.bytes_read
        if host_log.truncated:
            result.notes.append(
                f"{host_log.host}: log larger than the reading budget; read its head and tail."
            )
        result.hosts.append(host_log)
    return result


def _list_streams(logs: Any, job_name: str, limits: LogLimits, result: JobLogs) -> list[str]:
    names: list[str] = []
    kwargs: dict[str, Any] = {"logGroupName": LOG_GROUP, "logStreamNamePrefix": job_name + "/"}
    while True:
        page = logs.describe_log_streams(**kwargs)
        names.extend(s["logStreamName"] for s in page.get("logStreams", []))
        token = page.get("nextToken")
        if not token or len(names) > limits.max_streams:
            break
        kwargs["nextToken"] = token
    result.streams_total = len(names)
    if len(names) > limits.max_streams:
        result.notes.append(
            f"Job has more than {limits.max_streams} log streams; read the first {limits.max_streams}."
        )
        names = names[: limits.max_streams]
    return names


def _read_stream(
    logs: Any, stream: str, host: str, remaining: Callable[[], float], limits: LogLimits, budget: int
) -> HostLog:
    host_log = HostLog(host=host, stream=stream)
    cap = min(limits.max_bytes_per_stream, budget)
    kwargs: dict[str, Any] = {
        "logGroupName": LOG_GROUP,
        "logStreamName": stream,
        "startFromHead": True,
        "limit": limits.page_events,
    }
    token = None
    for _ in range(limits.max_pages_per_stream):
        if remaining() < limits.min_seconds_left:
            host_log.truncated = True
            return host_log
        page = logs.get_log_events(**kwargs)
        for event in page.get("events", []):
            message = str(event.get("message", ""))
            host_log.events.append((int(event.get("timestamp", 0)), message))
            host_log.bytes_read += len(message.encode("utf-8", "replace"))
        next_token = page.get("nextForwardToken")
        if not next_token or next_token == token:
            return host_log  # CloudWatch returns the token it was given once the stream is exhausted
        if host_log.bytes_read >= cap:
            break
        token = next_token
        kwargs["nextToken"] = token
    _read_tail(logs, stream, host_log, limits)
    return host_log


def _read_tail(logs: Any, stream: str, host_log: HostLog, limits: LogLimits) -> None:
    page = logs.get_log_events(
        logGroupName=LOG_GROUP, logStreamName=stream, startFromHead=False, limit=limits.tail_events
    )
    last_head = host_log.events[-1][0] if host_log.events else -1
    tail = [(int(e.get("timestamp", 0)), str(e.get("message", ""))) for e in page.get("events", [])]
    # A tail that reaches back into what the head read means nothing in between was skipped.
    host_log.truncated = bool(tail) and tail[0][0] > last_head
    for ts, message in tail:
        if ts > last_head:
            host_log.events.append((ts, message))
            host_log.bytes_read += len(message.encode("utf-8", "replace"))
