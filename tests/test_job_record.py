"""Reading ``scontrol show job -o`` when the job's owner chose some of its values (the name comes before
almost every key): a value that spells a key tracebot acts on must never be taken for SLURM's. Pure parsing,
on the captured Slurm 22.05 record; tests/plugins/slurm/test_slurm_security.py runs the same on the cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracebot.plugins.slurm.parse import AmbiguousRecord, parse_records

RUNNING = (Path(__file__).resolve().parent / "fixtures" / "slurm" / "scontrol_show_job_running_patterns.txt").read_text()


def test_a_job_named_as_if_it_ran_on_a_hundred_thousand_nodes_is_refused_never_fanned_out_to_them() -> None:
    # JobName comes before NodeList and the first of a key was kept: bob's job named "x NodeList=n[1-99999]"
    # made tracebot start a py-spy step (sudo, the privilege, scontrol, srun) for each of 99,999 nodes,
    # 64 at a time for hours, on the host and the controller every other user's /trace needs
    line = RUNNING.replace("JobName=hang", "JobName=x NodeList=n[1-99999]")
    with pytest.raises(AmbiguousRecord, match="names NodeList twice"):
        parse_records(line)


def test_the_real_record_still_names_its_nodes() -> None:
    assert parse_records(RUNNING)[0]["NodeList"] == "vm"


@pytest.mark.parametrize("mark", ["\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"])
def test_a_job_name_holding_a_unicode_line_boundary_is_still_one_record_of_its_owner(mark: str) -> None:
    # scontrol ends a record with "\n" only; str.splitlines also ends one at these, so "a<mark>b" made two
    # records of one job, the first (JobId, JobName) with no owner: the owner's own /trace job was refused
    # as not theirs, and an admin got an overview of two "parts"
    records = parse_records(RUNNING.replace("JobName=hang", f"JobName=a{mark}b"))
    assert len(records) == 1 and records[0]["UserId"] == "root(0)" and records[0]["JobState"] == "RUNNING"


@pytest.mark.parametrize("mark", ["\x1c", "\u2028"])
def test_a_record_a_name_spells_after_a_unicode_line_boundary_is_refused_not_listed_as_a_part(mark: str) -> None:
    # was: a second "part" of the job with the id, owner and state the name spelled, listed to an admin
    line = RUNNING.replace("JobName=hang", f"JobName=a{mark}JobId=6 UserId=alice(1001) JobState=COMPLETED{mark}b")
    with pytest.raises(AmbiguousRecord, match="twice"):
        parse_records(line)


@pytest.mark.parametrize("width, padded", [("5", "00006"), ("10", "0000000006"), ("99", "0000000006"),
                                           ("999999999", "0000000006"), ("9" * 5000, "0000000006")])
def test_an_output_patterns_padding_is_capped_at_slurmds_ten(width: str, padded: str) -> None:
    # "-o /tmp/x-%999999999j.out" is its owner's to write: tracebot padded the job id to a gigabyte (slurmd
    # pads to ten), and a 5,000-digit width raised ValueError from int()
    from tracebot.plugins.slurm.jobinfo import JobView
    from tracebot.plugins.slurm.logpaths import candidates

    job = JobView(asked="6", job_id="6", display_id="6", stdout=f"/tmp/x-%{width}j.out", workdir="/tmp")
    assert candidates(job) == [("stdout", Path(f"/tmp/x-{padded}.out"))]
