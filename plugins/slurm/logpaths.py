"""Where a job's output went: its StdOut/StdErr file name patterns, expanded the way slurmd does.

``sbatch -o`` patterns (see "filename pattern" in ``man sbatch``): ``%j`` job id, ``%x`` job name,
``%u`` user, ``%N`` first node, ``%A``/``%a`` array master id / task id, ``%%``, and a width
(``%5j`` pads with zeros). The output of ``sbatch`` is the batch step's, written by its one task on
its first node, so ``%t`` and ``%n`` are ``0`` and ``%s`` is ``batch`` (what slurmd writes): a
pattern never becomes a glob, so it never names files other than the job's own. Slurm 22.05 already
expands some of these in ``scontrol`` output, and writes a non-array job's ``%a`` as 4294967294
(NO_VAL) — so do we, to find the file it really wrote.
"""

from __future__ import annotations

import re
from pathlib import Path

from tracebot.plugins.slurm.jobinfo import JobView

NO_VAL = "4294967294"
MAX_WIDTH = 10  # slurmd's own cap on a pattern's zero padding (src/common: fname's MAX_WIDTH)
_PATTERN = re.compile(r"%(\d*)([%AajJNnstux])")


def expand(pattern: str, job: JobView, first_node: str = "") -> str:
    """Expand one pattern as slurmd does for the batch step's output."""
    array_master = job.array_job_id or job.job_id
    values = {
        "j": job.job_id, "J": job.job_id, "x": job.name, "u": job.user, "N": first_node or job.batch_host,
        "A": array_master, "a": job.array_task_id or NO_VAL, "t": "0", "n": "0", "s": "batch",
    }

    def sub(m: re.Match[str]) -> str:
        width, key = m.group(1), m.group(2)
        if key == "%":
            return "%"
        value = values.get(key, "")
        return value.zfill(_width(width)) if width and value.isdigit() else value

    return _PATTERN.sub(sub, pattern)


def _width(digits: str) -> int:
    """A pattern's zero-padding width as slurmd reads it: at most :data:`MAX_WIDTH`. The pattern is the job
    owner's: ``%999999999j`` padded the id to a gigabyte in tracebot, and 5,000 digits raised ValueError."""
    return MAX_WIDTH if len(digits.lstrip("0")) > 2 else min(int(digits), MAX_WIDTH)


def default_pattern(job: JobView) -> str:
    """sbatch's default output name when ``-o`` was not given."""
    name = "slurm-%A_%a.out" if job.array_task_id else "slurm-%j.out"
    return str(Path(job.workdir or ".") / name)


def candidates(job: JobView, first_node: str = "") -> list[tuple[str, Path]]:
    """``[("stdout", path), ("stderr", path), ...]``: existing or expected log files, stdout first.

    A relative pattern is relative to the job's working directory. Duplicates (StdErr = StdOut, the
    default) are listed once.
    """
    out: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    patterns = [("stdout", job.stdout or default_pattern(job)), ("stderr", job.stderr or job.stdout)]
    for label, pattern in patterns:
        if not pattern or pattern == "/dev/null":
            continue
        path = Path(expand(pattern, job, first_node))
        if not path.is_absolute():
            path = Path(job.workdir or ".") / path
        if path not in seen:
            seen.add(path)
            out.append((label, path))
    return out
