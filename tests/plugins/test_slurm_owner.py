"""Whose job is tracebot's own: by uid, never by name. A job of tracebot's own Unix user is dumped and its log
opened with tracebot's rights; any other goes through the ``slurm.as_owner`` privilege (or is refused). Names
can be renamed or reused, and two names can be one uid: only the uid says whose rights a job carries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracebot.plugin_api import Caller, NotAllowed
from tracebot.plugins.slurm.access import check_job_access
from tracebot.plugins.slurm.client import SlurmCli
from tracebot.plugins.slurm.hang import srun_argv
from tracebot.plugins.slurm.jobinfo import from_scontrol
from tracebot.plugins.slurm.owner import OwnerRefused, is_own, log_opener, own_user
from tracebot.plugins.slurm.settings import SlurmSettings

PRIVILEGE = ["sudo", "-n", "/usr/local/libexec/tracebot-as-owner"]
OTHER_UID = os.getuid() + 4242  # not ours, whoever runs the tests


def test_scontrols_owner_carries_slurms_uid():
    job = from_scontrol("5", {"JobId": "5", "UserId": f"{own_user()}({OTHER_UID})", "JobState": "RUNNING"})
    assert (job.user, job.uid) == (own_user(), OTHER_UID)


def test_tracebots_name_with_another_uid_is_not_its_own_and_the_log_is_refused_saying_why(tmp_path: Path):
    # SLURM's database says the owner is "tracebot" but with another uid (a renamed or reused name): compared
    # by name, tracebot opened the job's log with its own rights and py-spied it as itself
    assert not is_own(own_user(), OTHER_UID)
    log = tmp_path / "job.out"
    log.write_text("x\n")
    opener = log_opener(SlurmSettings(as_owner=PRIVILEGE), "5", own_user(), OTHER_UID)
    assert opener is not None
    with pytest.raises(OwnerRefused) as refused:
        opener(log)
    assert str(refused.value) == (f"the job's owner is {own_user()} with uid {OTHER_UID} to SLURM, but tracebot runs "
                                  f"as {own_user()} with uid {os.getuid()} here: whose rights to take cannot be told")
    argv = srun_argv(SlurmCli(), "5", "n1", SlurmSettings(as_owner=PRIVILEGE), 30, own_user(), OTHER_UID)
    assert argv[:3] == PRIVILEGE  # the privilege dumps it (and refuses the same clash on its host)


def test_tracebots_uid_under_another_name_is_its_own():
    # two names, one uid (an alias in the user database): the job is tracebot's own, opened and dumped as itself
    assert is_own("tracebot-alias", os.getuid())
    assert log_opener(SlurmSettings(as_owner=PRIVILEGE), "5", "tracebot-alias", os.getuid()) is None
    argv = srun_argv(SlurmCli(), "5", "n1", SlurmSettings(as_owner=PRIVILEGE), 30, "tracebot-alias", os.getuid())
    assert "--jobid=5" in argv and argv[:3] != PRIVILEGE


def test_without_slurms_uid_the_name_is_looked_up_here():
    # sacct's rows (a job the controller forgot) name the owner without a uid: this host's user database decides
    assert is_own(own_user()) and not is_own("no-such-user-4242") and not is_own("")


def test_a_caller_mapped_to_a_name_slurm_gives_another_uid_may_not_trace_the_job():
    # a name reused or renamed: SLURM's job of "root" is uid OTHER_UID's, not the mapped user's
    caller = Caller(slack_user="U1", cluster_user=own_user())
    with pytest.raises(NotAllowed, match="is not yours"):
        check_job_access(caller, own_user(), "5", SlurmSettings(), OTHER_UID)
    check_job_access(caller, own_user(), "5", SlurmSettings(), os.getuid())  # the same uid: the caller's job
    check_job_access(caller, own_user(), "5", SlurmSettings())  # sacct's rows give no uid: the name decides
