"""The privilege's reading of a job's record (``scripts/deploy/tracebot-as-owner``, run as root): whose job
it is and where its log may be come from ``scontrol show job -o``, a line of ``Key=Value`` in which the job's
owner chose several values (the name, the comment, the script's path, the working directory, the output
paths). A value that spells a key must never decide whose rights the privilege takes. Pure parsing, on the
captured Slurm 22.05 records; the cluster tests (tests/plugins/slurm/test_slurm_security.py) run it for real."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "tests" / "fixtures" / "slurm"


def _wrapper():
    path = REPO / "scripts" / "deploy" / "tracebot-as-owner"
    loader = importlib.machinery.SourceFileLoader("tracebot_as_owner", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


WRAPPER = _wrapper()
RUNNING = (FIX / "scontrol_show_job_running_patterns.txt").read_text().splitlines()[0]


def _as_bob(line: str) -> str:
    return line.replace("UserId=root(0)", "UserId=bob(1002)").replace("GroupId=root(0)", "GroupId=bob(1002)")


def test_the_privilege_reads_the_owner_state_and_log_patterns_of_a_real_record():
    record = WRAPPER.parse_record(_as_bob(RUNNING))
    assert record["UserId"] == "bob(1002)" and record["JobState"] == "RUNNING"
    assert record["StdOut"] == "/tmp/slx/hang-6-root-%N-6-4294967294.out" and record["WorkDir"] == "/tmp/slx"


def test_a_log_path_with_spaces_is_read_whole():
    line = _as_bob(RUNNING).replace("StdOut=/tmp/slx/hang", "StdOut=/tmp/my runs/hang")
    assert WRAPPER.parse_record(line)["StdOut"] == "/tmp/my runs/hang-6-root-%N-6-4294967294.out"


@pytest.mark.parametrize("where, value", [
    ("Command=(null)", "Command=/home/bob/a UserId=alice(1001)"),  # the batch script's path
    ("WorkDir=/tmp/slx", "WorkDir=/tmp/x UserId=alice(1001) StdOut=/home/alice/private.log"),  # --chdir
    ("JobName=hang", "JobName=x UserId=alice(1001)"),  # the job's name
    ("Command=(null)", "Command=/home/bob/b\tJobState=RUNNING"),  # a tab is whitespace to split() too
])
def test_a_value_that_spells_a_key_the_privilege_decides_by_is_refused_never_believed(where, value):
    # bob's job whose script path (or working directory, or name) reads "UserId=alice(1001)": taking the last
    # (or the first) UserId made the root privilege drop to alice and open alice's file for bob's /trace job
    line = _as_bob(RUNNING).replace(where, value)
    with pytest.raises(WRAPPER.Refused, match="twice"):
        WRAPPER.parse_record(line)


def _scontrol_printing(tmp_path, monkeypatch, text: str) -> None:
    """A stand-in ``scontrol`` that prints ``text`` (the privilege's own reading is what is tested; the
    cluster tests run the real one)."""
    scontrol = tmp_path / "scontrol"
    scontrol.write_text(f"#!/bin/sh\nprintf '%b' '{text}'\n")
    scontrol.chmod(0o755)
    monkeypatch.setattr(WRAPPER, "SLURM_BIN", str(tmp_path))


def test_a_job_name_that_is_not_utf8_gets_a_refusal_in_words_never_a_traceback(tmp_path, monkeypatch, capsys):
    # scontrol prints a job's name as bytes, and bob's may be b"x\xff": the privilege died decoding the record
    # and tracebot showed "Traceback (most recent call last):" as the reason (root's job: refused before anything runs)
    _scontrol_printing(tmp_path, monkeypatch, RUNNING.replace("JobName=hang", "JobName=x\\377") + "\\n")
    assert WRAPPER.job_record("6")["JobName"] == "x\ufffd"
    assert WRAPPER.main(["dump", "6", "vm", "10", "10"]) == 2
    assert "refused: job 6 belongs to root" in capsys.readouterr().err


@pytest.mark.parametrize("fixture, job_id", [("scontrol_show_job_array.txt", "7"), ("scontrol_show_job_het.txt", "8")])
def test_the_array_task_or_het_component_with_the_jobs_own_id_is_found_among_its_siblings(
        tmp_path, monkeypatch, capsys, fixture, job_id):
    # "scontrol show job 7" prints every task of array 7, and task 7_2's own id is 7 (het job 8: component
    # 8+0 is job 8): the privilege took any answer of more than one line for a job the controller forgot,
    # so it refused to dump another user's task 7_2 as "not running" and checked its log path against nothing
    _scontrol_printing(tmp_path, monkeypatch, (FIX / fixture).read_text())
    record = WRAPPER.job_record(job_id)
    assert record["JobId"] == job_id and record["UserId"] == "root(0)"
    assert WRAPPER.main(["log", job_id, "/tmp/x.out"]) == 2
    assert f"refused: job {job_id} belongs to root" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["x\\ny", "x\\nJobId=6 UserId=alice(1001) JobState=RUNNING StdOut=/home/alice/a\\ny"])
def test_a_record_a_line_break_in_the_name_cuts_in_two_is_refused_never_taken_for_forgotten(
        tmp_path, monkeypatch, capsys, name):
    # bob's job named "x<newline>y" is two lines: taken for a job the controller forgot, its owner came from
    # accounting and its log path was checked against no StdOut pattern at all
    _scontrol_printing(tmp_path, monkeypatch, RUNNING.replace("JobName=hang", f"JobName={name}") + "\\n")
    assert WRAPPER.main(["log", "6", "/tmp/slx/hang-6-root-vm-6-4294967294.out"]) == 2
    assert "line break" in capsys.readouterr().err


@pytest.mark.parametrize("mark", ["\\034", "\\035", "\\036", "\\013", "\\014", "\\342\\200\\250"])
def test_a_job_name_holding_a_unicode_line_boundary_is_not_taken_for_a_line_break(tmp_path, monkeypatch, mark):
    # \x1c-\x1e, \v, \f and U+2028 end a line for str.splitlines, not for scontrol: bob's job named "x<mark>y"
    # was refused as "cut by a line break" although its record was whole
    _scontrol_printing(tmp_path, monkeypatch, _as_bob(RUNNING).replace("JobName=hang", f"JobName=x{mark}y") + "\\n")
    record = WRAPPER.job_record("6")
    assert record["UserId"] == "bob(1002)" and record["JobState"] == "RUNNING"


@pytest.mark.parametrize("path, pattern, fits", [
    ("/tmp/slx/hang-6-root-vm-6-4294967294.out", "/tmp/slx/hang-%j-%u-%N-%A-%a.out", True),
    ("/tmp/slx/hang-6.out", "hang-%j.out", True),  # relative to the working directory
    ("/tmp/slx/100%-6.out", "/tmp/slx/100%%-%5j.out", True),
    ("/tmp/slx/hang.out", "/tmp/slx/hang%x.out", True),  # a spec may stand for nothing
    ("/tmp/slx/a/b.out", "/tmp/slx/%x.out", False),  # but never for a "/"
    ("/tmp/slx/hang-6.err", "/tmp/slx/hang-%j.out", False),
    ("/tmp/slx/abab", "/tmp/slx/%xab%xab", True),
    ("/tmp/slx/ab", "/tmp/slx/%xab%xab", False),  # the two "ab" may not share letters
    ("/tmp/other/hang-6.out", "/tmp/slx/hang-%j.out", False),
])
def test_the_privilege_tells_a_path_that_fits_the_jobs_output_pattern_from_one_that_does_not(path, pattern, fits):
    assert WRAPPER.fits_pattern(path, pattern, "/tmp/slx") is fits


def test_a_pattern_of_many_specs_is_checked_against_an_unfitting_path_at_once_never_for_minutes():
    # bob's `-o /tmp/%x%x…%x.out` checked against his StdErr's path (which it does not fit): as a regex of one
    # [^/]* per spec, the root privilege tried every split of the name among them, before dropping its rights,
    # for longer than tracebot waits; sudo went on burning a core as root after tracebot gave up on it
    probe = (f"import importlib.machinery as m; w = m.SourceFileLoader('w', {str(REPO / 'scripts/deploy/tracebot-as-owner')!r})"
             ".load_module(); print(w.fits_pattern('/tmp/' + 'a' * 60 + '.err', '/tmp/' + '%x' * 16 + '.out', '/'))")
    assert _run_for(probe, 10.0) == "False"


def _run_for(code: str, seconds: float) -> str:
    try:
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                              timeout=seconds, check=True)
    except subprocess.TimeoutExpired:
        return f"still matching after {seconds:g}s"
    return done.stdout.strip()


def test_an_owner_whose_uid_on_this_host_is_not_slurms_is_refused_never_acted_as():
    # SLURM names the owner with their uid ("bob(1002)"); the privilege looked up the name alone, so a host
    # whose own "bob" (a local account shadowing the directory's) has another uid got that other person's rights
    local = next(u for u in pwd.getpwall() if u.pw_uid != 0)
    other = local.pw_uid + 4242
    record = WRAPPER.parse_record(_as_bob(RUNNING).replace("UserId=bob(1002)", f"UserId={local.pw_name}({other})"))
    with pytest.raises(WRAPPER.Refused, match=f"uid {other} to SLURM, but {local.pw_name} is uid {local.pw_uid} on"):
        WRAPPER.owner_of(record, "6")
    same = WRAPPER.parse_record(_as_bob(RUNNING).replace("UserId=bob(1002)", f"UserId={local.pw_name}({local.pw_uid})"))
    assert WRAPPER.owner_of(same, "6").pw_uid == local.pw_uid
