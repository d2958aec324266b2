"""One reading of /proc/PID/stat serves the store (whose process owns a row of work) and plugins (through
the plugin API): a command name with spaces and parentheses, a zombie, a pid that is gone."""

from __future__ import annotations

import os
from pathlib import Path

from tracebot import plugin_api
from tracebot.procstat import proc_stat, start_time
from tracebot.store import owner as owners


def _fake_proc(tmp_path: Path, pid: int, comm: str, state: str, start: int) -> Path:
    rest = " ".join(["1"] * 18)  # fields 4-21
    (tmp_path / str(pid)).mkdir()
    (tmp_path / str(pid) / "stat").write_text(f"{pid} ({comm}) {state} {rest} {start} 0 0\n")
    return tmp_path


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(tmp_path: Path):
    proc = _fake_proc(tmp_path, 77, "python ) S 9 (x", "S", 123456)
    assert start_time(77, proc) == 123456
    assert proc_stat(77, proc).state == "S"  # type: ignore[union-attr]


def test_a_gone_pid_has_no_start_time(tmp_path: Path):
    assert start_time(78, tmp_path) is None and proc_stat(78, tmp_path) is None


def test_the_store_and_the_plugins_read_the_same_start_time():
    assert plugin_api.start_time is start_time
    mine = start_time(os.getpid())
    assert isinstance(mine, int) and owners.token().split("|")[3] == str(mine)


def test_the_py_spy_plugins_process_tree_reads_the_same_parent():
    from tracebot.plugins.pyspy.procs import parent_map

    assert plugin_api.proc_stat is proc_stat
    mine = proc_stat(os.getpid())
    assert mine is not None and mine.ppid == os.getppid()
    assert parent_map()[os.getpid()] == os.getppid()
