"""``/trace gpus``: whose command lines a caller may see is decided by numeric uid, not by the user name
``ps`` prints (``ps -o user=`` cuts a long name to ``systemd+``, which hid a long-named user's own
command lines from them). Real processes of this machine owned by real long-named system users, real
``ps``; no cluster needed (tests/plugins/slurm/test_slurm_gpus.py covers the whole command on it)."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator

import pytest

from tests.support import require
from tracebot.plugin_api import Caller
from tracebot.plugins.slurm.access import visible_ps
from tracebot.plugins.slurm.gpus import ps_details

LONG_NAMED = [p.pw_name for p in pwd.getpwall() if len(p.pw_name) > 8 and p.pw_uid != 0]


@pytest.fixture
def long_named_process() -> Iterator[tuple[int, str]]:
    """``sleep 301`` run by a system user whose name is longer than ps's 8-column user field."""
    require(os.geteuid() == 0, "starting a process as another user needs root")
    require(len(LONG_NAMED) >= 2, "two users with names longer than 8 characters")
    proc = subprocess.Popen(["sleep", "301"], user=LONG_NAMED[0], start_new_session=True)
    try:
        yield proc.pid, LONG_NAMED[0]
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_long_named_user_sees_their_own_command_line_and_others_do_not(long_named_process) -> None:
    pid, owner = long_named_process
    details = ps_details([], [pid], timeout=10)
    assert details[pid].uid == pwd.getpwnam(owner).pw_uid
    assert details[pid].text.startswith(owner + " ")  # the whole name, not "systemd+"

    mine = visible_ps(details, Caller(cluster_user=owner), sees_all=False)
    assert "sleep 301" in mine[pid]
    other = visible_ps(details, Caller(cluster_user=LONG_NAMED[1]), sees_all=False)
    assert "sleep 301" not in other[pid] and other[pid].startswith(owner + " ")
    unmapped = visible_ps(details, Caller(cluster_user=None), sees_all=False)
    assert "sleep 301" not in unmapped[pid]
    unknown = visible_ps(details, Caller(cluster_user="no-such-user-here"), sees_all=False)
    assert "sleep 301" not in unknown[pid]
