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
