"""``/trace pid``: py-spy dumps a launcher's descendants too, so each one is checked, not only the pid
asked for: a rank that changed user (setuid, sudo) is left out for a caller who does not own it. Real
process trees of this machine, read from /proc; no py-spy needed (tests/plugins/pyspy covers the dump)."""

from __future__ import annotations

import contextlib
import os
import pwd
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.support import require
from tracebot.plugins.pyspy import procs

OTHER = "nobody"
# A launcher whose ranks in FOREIGN run as another user, as a rank that went through sudo or a setuid
# binary does.
LAUNCHER = f"""
import os, subprocess, sys
foreign = {{int(r) for r in sys.argv[1].split(",") if r}}
ranks = [subprocess.Popen(["sleep", "300"], env={{**os.environ, "RANK": str(r)}},
                          user={OTHER!r} if r in foreign else None) for r in range(3)]
sys.stdin.read()
for p in ranks:
    p.kill()
"""


@contextlib.contextmanager
def launcher(foreign: str) -> Iterator[int]:
    require(os.geteuid() == 0, "starting a rank as another user needs root")
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, foreign], stdin=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(procs.targets(proc.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)  # polls for the state asserted below (all three ranks started)
        yield proc.pid
    finally:
        proc.communicate(b"", timeout=10)


@pytest.fixture
def launcher_with_a_foreign_rank() -> Iterator[int]:
    with launcher("1") as pid:
        yield pid


def test_a_rank_running_as_another_user_is_left_out_and_counted(launcher_with_a_foreign_rank: int) -> None:
    found = procs.targets(launcher_with_a_foreign_rank)
    assert [t.label for t in found] == ["0", "1", "2"]
    mine, others = procs.split_by_owner(found, os.geteuid())
    assert [t.label for t in mine] == ["0", "2"]
    assert [t.label for t in others] == ["1"]
    assert procs.owned_by(others[0].pid, pwd.getpwnam(OTHER).pw_uid)


def test_a_process_is_owned_only_when_every_uid_is_the_callers(launcher_with_a_foreign_rank: int) -> None:
    me, other = os.geteuid(), pwd.getpwnam(OTHER).pw_uid
    assert procs.owned_by(launcher_with_a_foreign_rank, me)
    assert not procs.owned_by(launcher_with_a_foreign_rank, other)
    assert not procs.owned_by(4_194_305, me)  # no such process
    # as a setuid program runs: the caller's real uid, another effective (and saved) uid
    setuid_like = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys; os.setresuid({other}, {me}, {me}); print(flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert setuid_like.stdout is not None and setuid_like.stdout.readline() == b"\n"  # uids are set now
        assert procs.uids(setuid_like.pid) == (other, me, me, me)
        assert not procs.owned_by(setuid_like.pid, other)
    finally:
        setuid_like.communicate(b"", timeout=10)


def test_when_every_rank_runs_as_another_user_nothing_is_dumped_and_the_reason_is_given(host, make_ctx) -> None:
    with launcher("0,1,2") as parent:
        result = host.run_command("pid", make_ctx(cluster_user=pwd.getpwuid(os.geteuid()).pw_name), [str(parent)])
    assert result.status == "error" and result.stack_groups == [] and result.data["left_out"] == 3
    assert "All 3 process(es) to dump under pid" in result.summary and "another user" in result.summary
    assert "an admin can trace them" in result.summary


# Written here (review12). Ownership is checked, then py-spy runs: a process can change user in between (exec a
# setuid program, or exit and have its pid reused by another user's process). A stack read after that is not
# the caller's to see, so each dumped process is checked again once the dump is done.
CHANGES_USER_ON_REQUEST = f"""
import os, pwd, sys
other = pwd.getpwnam({OTHER!r}).pw_uid
print("ready", flush=True)
sys.stdin.readline()
os.setresuid(other, other, other)
print("changed", flush=True)
sys.stdin.read()
"""


def test_a_process_that_changes_user_while_it_is_dumped_is_not_shown(host, make_ctx, monkeypatch) -> None:
    require(os.geteuid() == 0, "changing a process's user needs root")
    from tracebot.plugins.pyspy import command

    target = subprocess.Popen([sys.executable, "-c", CHANGES_USER_ON_REQUEST], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, start_new_session=True)
    assert target.stdin is not None and target.stdout is not None
    try:
        assert target.stdout.readline() == b"ready\n"
        real_dump_many = command.dump_many

        def dump_after_the_change(pids, **kwargs):  # the real py-spy, run once the process has changed user
            target.stdin.write(b"go\n")
            target.stdin.flush()
            assert target.stdout.readline() == b"changed\n"
            return real_dump_many(pids, **kwargs)

        monkeypatch.setattr(command, "dump_many", dump_after_the_change)
        result = host.run_command("pid", make_ctx(cluster_user=pwd.getpwuid(os.geteuid()).pw_name), [str(target.pid)])
    finally:
        target.kill()
        target.wait(timeout=10)
    assert result.stack_groups == [], result.stack_groups
    assert result.status == "error" and result.data["left_out"] == 1
    assert any("another user" in n for n in result.data["notes"]), result.data
