"""Reading ``sacct --parsable2`` rows when a job's owner chose some of their text (the job's or a step's name,
the working directory, the sbatch/srun command line): nothing the owner writes may become a row of its own or
move another field. Pure parsing: ``SlurmCli.run`` answers as Slurm 22.05's sacct prints (print_fields_str:
each value as is, then the ``--delimiter`` string asked for; a newline after each row), from the captured
rows of tests/fixtures/slurm/sacct_mixed.unitsep. The cluster test for the same attack is in
tests/plugins/slurm/test_slurm_security.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracebot.plugins.slurm.client import SACCT_FIELDS, SlurmCli
from tracebot.plugins.slurm.jobinfo import from_sacct, submit_line_outputs

FIX = Path(__file__).resolve().parent / "fixtures" / "slurm"
CAPTURED_SEP = "\x1f"  # the delimiter the fixture was captured with


def _captured_rows(job: str) -> list[list[str]]:
    rows = [line.split(CAPTURED_SEP) for line in (FIX / "sacct_mixed.unitsep").read_text().splitlines()]
    return [r for r in rows if r[1] == job or r[1].startswith(job + ".")]


def _forged_row(job: str, user: str, submit_line: str) -> str:
    """A whole allocation row as bob would spell it, with the delimiter tracebot has always used."""
    values = dict(zip(SACCT_FIELDS, _captured_rows("2")[0], strict=True))
    values.update(JobID=job, JobIDRaw=job, JobName="x", User=user, State="COMPLETED", ExitCode="0:0",
                  SubmitLine=submit_line)
    return CAPTURED_SEP.join(values[f] for f in SACCT_FIELDS)


class _Sacct(SlurmCli):
    """SlurmCli whose sacct prints ``rows`` with the delimiter its argv asks for, as sacct does."""

    def __init__(self, rows: list[list[str]]) -> None:
        super().__init__()
        self.rows = rows
        self.delimiters: list[str] = []

    def run(self, tool: str, *args: str, timeout: float | None = None) -> str:
        assert tool == "sacct"
        sep = next(a.split("=", 1)[1] for a in args if a.startswith("--delimiter="))
        self.delimiters.append(sep)
        return "".join(sep.join(row) + "\n" for row in self.rows)


def _bobs_job(where: str, text: str) -> list[list[str]]:
    """Job 2 of the fixture, bob's, with ``text`` in one of the fields he chooses."""
    rows = [list(r) for r in _captured_rows("2")]
    rows[0][3] = "bob"
    column = SACCT_FIELDS.index(where)
    rows[0][column] = text if where != "SubmitLine" else rows[0][column] + text
    return rows


@pytest.mark.parametrize("where", ["SubmitLine", "JobName", "WorkDir"])
def test_a_row_spelled_in_a_jobs_own_text_is_never_taken_for_its_owners(where: str) -> None:
    # bob's --wrap (or name, or --chdir) holds a newline and then a whole row in sacct's delimiter: its
    # User "tracebot" replaced the real row of job 2, and tracebot opened the -o it names with its own rights
    forged = "\n" + _forged_row("2", "tracebot", "sbatch -o /etc/tracebot/tracebot.yaml x")
    cli = _Sacct(_bobs_job(where, forged))
    jobs = from_sacct("2", cli.accounting("2"))
    assert [(j.job_id, j.user) for j in jobs] == [("2", "bob")]
    assert [s.step_id for s in jobs[0].steps] == ["batch"]
    assert "/etc/tracebot" not in submit_line_outputs(jobs[0].submit_line)[0]


def test_each_question_to_sacct_uses_a_delimiter_nobody_could_have_written_into_a_job() -> None:
    cli = _Sacct(_captured_rows("2"))
    cli.accounting("2")
    cli.accounting("2")
    first, second = cli.delimiters
    assert first != second and len(first) >= 16 and CAPTURED_SEP in first


def test_a_multi_line_wrapped_command_stays_whole_and_its_output_path_is_still_found() -> None:
    rows = [list(r) for r in _captured_rows("2")]
    rows[0][-1] = "sbatch -o /tmp/slx/%x-%j.out --wrap 'echo a\necho b'"
    rows.append(list(rows[1]))  # a second step after the batch step
    rows[2][0] = rows[2][1] = "2.0"
    jobs = from_sacct("2", _Sacct(rows).accounting("2"))
    assert jobs[0].submit_line == rows[0][-1]
    assert submit_line_outputs(jobs[0].submit_line) == ("/tmp/slx/%x-%j.out", "")
    assert [s.step_id for s in jobs[0].steps] == ["batch", "0"]
