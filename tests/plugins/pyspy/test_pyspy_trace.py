"""``/trace pid`` with real py-spy against real hung Python processes."""

from __future__ import annotations

import io
import os
import pwd
import shutil
import subprocess
import sys
import time

import pytest
from PIL import Image

from tests.plugins.pyspy.hung import line_of, wait_for_ranks, wait_until_in
from tests.support import entry_dict, require, write_kb
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher
from tracebot.plugins.pyspy import command as pid_command
from tracebot.plugins.pyspy.dump import ProcessDump, dump_many
from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.pyspy.render import cell_box, group_colours, ordered_labels, summarise_groups

pytestmark = pytest.mark.integration


def test_the_rank_waiting_for_data_is_the_odd_one_out_listed_first(hung, worker_script):
    pids = {"0": hung("wait"), "1": hung("odd"), "2": hung("wait"), "3": hung("wait")}
    raw = dump_many(list(pids.values()))
    groups = group_stacks({label: raw[pid].frames for label, pid in pids.items()})  # type: ignore[union-attr]

    assert [g.ranks for g in groups] == [["1"], ["0", "2", "3"]]
    assert [g.odd_one_out for g in groups] == [True, False]
    assert groups[0].where.function == "load_next_batch" and groups[0].where.filename == str(worker_script)
    assert groups[1].where.function == "all_reduce_wait"
    assert summarise_groups(groups) == (f"rank 1: load_next_batch (worker.py:{line_of('LOAD_LINE')}) — "
                                        f"ranks 0, 2, 3: all_reduce_wait (worker.py:{line_of('WAIT_LINE')})")


def test_the_main_thread_is_dumped_not_a_helper_thread(spawn, tmp_path):
    script = tmp_path / "threads.py"
    script.write_text("import threading, time\n"
                      "def helper():\n    threading.Event().wait()\n"
                      "threading.Thread(target=helper, daemon=True).start()\n"
                      "def training_step():\n    threading.Event().wait()\n"
                      "training_step()\n")
    proc = spawn(sys.executable, str(script))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        dump = dump_many([proc.pid])[proc.pid]
        if isinstance(dump, ProcessDump) and dump.threads == 2 and any(
                f.function == "training_step" for f in dump.frames):
            break
        time.sleep(0.05)
    assert isinstance(dump, ProcessDump) and dump.threads == 2
    assert [f.function for f in dump.frames][-2:] == ["training_step", "<module>"]


def test_a_launcher_pid_is_traced_as_its_ranks_grouped_by_stack(launcher, host, make_ctx):
    parent, ranks = launcher(3, 1)
    result = host.run_command("pid", make_ctx(cluster_user="root"), [str(parent)])

    assert result.data["processes"] == {t.label: t.pid for t in ranks}
    assert list(result.data["processes"]) == ["0", "1", "2"]
    assert [g.ranks for g in result.stack_groups] == [["1"], ["0", "2"]]
    assert result.stack_groups[0].odd_one_out
    assert result.summary.startswith("rank 1: load_next_batch (worker.py:")
    assert "ranks 0, 2: all_reduce_wait (worker.py:" in result.summary
    assert result.status == "warning" and result.attachments == []


def test_more_than_eight_ranks_come_with_a_png_coloured_by_stack_group(launcher, host, make_ctx):
    parent, _ = launcher(10, 7)
    result = host.run_command("pid", make_ctx(is_admin=True), [str(parent)])
    [png] = result.attachments
    assert png.filename == "ranks.png" and png.mimetype == "image/png"

    image = Image.open(io.BytesIO(png.content)).convert("RGB")
    labels = ordered_labels(result.stack_groups, result.unreadable)
    colours = group_colours(result.stack_groups)
    group_of = {r: i for i, g in enumerate(result.stack_groups) for r in g.ranks}
    for index, label in enumerate(labels):
        x0, y0, x1, y1 = cell_box(index, len(labels))
        assert image.getpixel((x1 - 2, y1 - 2)) == colours[group_of[label]], f"rank {label}"
    assert image.getpixel(cell_box(7, 10)[2:]) != image.getpixel(cell_box(6, 10)[2:])


def test_dead_and_non_python_processes_are_listed_with_reasons_and_the_rest_still_dumped(hung, spawn):
    alive = hung("wait")
    not_python = spawn("sleep", "600").pid
    died = subprocess.Popen([sys.executable, "-c", "pass"])
    died.wait(timeout=30)

    raw = dump_many([alive, not_python, died.pid])

    assert isinstance(raw[alive], ProcessDump)
    assert raw[not_python] == "not a Python process (py-spy found no interpreter)"
    assert raw[died.pid] == "no such process (it exited)"


def test_a_rank_that_dies_after_being_found_is_reported_not_fatal(launcher, host, make_ctx, monkeypatch):
    parent, ranks = launcher(3, 1)
    real_targets = pid_command.procs.targets

    def targets_then_rank_2_dies(pid: int):
        found = real_targets(pid)
        os.kill(ranks[2].pid, 9)
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{ranks[2].pid}") and _state(ranks[2].pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.02)
        return found

    monkeypatch.setattr(pid_command.procs, "targets", targets_then_rank_2_dies)
    result = host.run_command("pid", make_ctx(is_admin=True), [str(parent)])
    assert [g.ranks for g in result.stack_groups] == [["0"], ["1"]]
    assert list(result.unreadable) == ["2"] and "pid" in result.unreadable["2"]
    assert "unreadable: rank 2" in result.summary


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges to provoke EPERM needs root")
def test_a_process_py_spy_may_not_read_is_reported_with_the_ptrace_entry(hung, host, make_ctx, pyspy_argv,
                                                                         matcher):
    require(shutil.which("setpriv") is not None, "setpriv (util-linux) is not installed")
    target = hung("wait")
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *pyspy_argv]
    settings = {"path": as_nobody}
    result = host.run_command("pid", make_ctx(is_admin=True, settings=settings, matcher=matcher), [str(target)])
    assert result.status == "error" and result.stack_groups == []
    reason = result.unreadable[f"pid {target}"]
    assert reason.startswith(f"pid {target}: permission denied (py-spy: Permission Denied")
    assert "run as the process owner or root" in reason
    assert [m.entry_id for m in result.matches] == ["py-spy-permission-denied"]  # the bundled knowledge base


@pytest.mark.parametrize("words", [
    ["4242; rm -rf /"], ["$(id)"], ["`id`"], ["4242", "--host", "a;b"], ["4242", "--host", "$(id)"],
    ["4242", "--host=node1 && reboot"], ["-1"], ["0"], ["99999999"], ["4242", "4243"], ["4242", "--nativ"], [],
])
def test_injection_and_nonsense_are_refused_before_any_subprocess(words, host, make_ctx, monkeypatch):
    def no_subprocess(*args, **kwargs):
        raise AssertionError(f"a subprocess was started for {words}")

    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    result = host.run_command("pid", make_ctx(is_admin=True), words)
    assert result.status == "error" and result.data["error"] == "usage"
    assert "Usage: `/trace pid <pid> [--host H] [--native]`" in result.summary


def test_remote_hosts_are_refused_clearly_unless_ssh_is_enabled(host, make_ctx, monkeypatch):
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("no ssh may run"))
    result = host.run_command("pid", make_ctx(is_admin=True), ["4242", "--host", "gpu-node-01"])
    assert result.data["error"] == "usage" and "not enabled" in result.summary


def test_a_user_may_trace_only_their_own_processes(hung, host, make_ctx):
    target = hung("wait")  # owned by the user running the tests
    me = pwd.getpwuid(pid_command.procs.uids(target)[0]).pw_name
    other = "nobody" if me != "nobody" else "daemon"

    refused = host.run_command("pid", make_ctx(cluster_user=other), [str(target)])
    unmapped = host.run_command("pid", make_ctx(cluster_user=None), [str(target)])
    allowed = host.run_command("pid", make_ctx(cluster_user=me), [str(target)])

    assert refused.status == "error" and "not yours" in refused.summary and refused.stack_groups == []
    assert "not mapped to a cluster user" in unmapped.summary
    assert allowed.stack_groups[0].where.function == "all_reduce_wait"


def test_a_rank_that_changed_user_is_left_out_of_the_dump_and_counted(spawn, worker_script, host, make_ctx):
    """Rank 1 runs as another user (as after sudo or a setuid binary): py-spy must not read it for a
    caller who owns only the launcher and the other ranks."""
    require(os.geteuid() == 0, "starting a rank as another user needs root")
    launch = (f"import os, subprocess, sys\n"
              f"kids = [subprocess.Popen([sys.executable, {str(worker_script)!r}, 'wait'], "
              f"env={{**os.environ, 'RANK': str(r)}}, stdin=subprocess.PIPE) for r in (0, 2)]\n"
              f"kids.append(subprocess.Popen(['sleep', '300'], env={{**os.environ, 'RANK': '1'}}, user='nobody'))\n"
              f"sys.stdin.read()\n")
    parent = spawn(sys.executable, "-c", launch).pid
    ranks = wait_for_ranks(parent, 3)
    for target in ranks:
        if target.label != "1":
            wait_until_in(target.pid, "all_reduce_wait")
    me = pwd.getpwuid(pid_command.procs.uids(parent)[0]).pw_name

    result = host.run_command("pid", make_ctx(cluster_user=me), [str(parent)])
    assert list(result.data["processes"]) == ["0", "2"] and result.data["left_out"] == 1
    assert [g.ranks for g in result.stack_groups] == [["0", "2"]] and "1" not in result.unreadable
    assert any("1 process(es) under pid" in n and "another user" in n for n in result.data["notes"])
    admin = host.run_command("pid", make_ctx(cluster_user=None, is_admin=True), [str(parent)])
    assert list(admin.data["processes"]) == ["0", "1", "2"] and "left_out" not in admin.data


def test_a_pid_that_does_not_exist_says_so(host, make_ctx):
    with open("/proc/sys/kernel/pid_max") as fh:
        top = int(fh.read()) - 1
    # the highest pid not in use now (pid_max - 1 itself can be, once pids have wrapped round on a long-running machine)
    unused = next(p for p in range(top, 1, -1) if not os.path.exists(f"/proc/{p}"))
    result = host.run_command("pid", make_ctx(is_admin=True), [str(unused)])
    assert result.status == "error" and result.summary.startswith(f"No process {unused} on ")


def test_the_knowledge_entry_a_stuck_stack_points_to_comes_with_the_result(launcher, host, make_ctx, tmp_path):
    anchor = "stuck in all_reduce_wait"
    kb, errors = load_knowledge_base(write_kb(tmp_path / "kb", [
        entry_dict("ranks-waiting-in-collective", recognise={"anchors": [anchor]},
                   examples={"match": [f"py-spy: ranks 0, 2 {anchor} (train.py)"]}),
        entry_dict("unrelated-oom", recognise={"anchors": ["CUDA out of memory"]},
                   examples={"match": ["CUDA out of memory"]}),
    ]))
    assert not errors, errors
    parent, _ = launcher(3, 1)
    result = host.run_command("pid", make_ctx(is_admin=True, matcher=Matcher(kb)), [str(parent)])
    assert [m.entry_id for m in result.matches] == ["ranks-waiting-in-collective"]


def test_native_stacks_are_dumped_or_the_rank_says_to_try_without_native(hung, host, make_ctx):
    pid = hung("odd")
    result = host.run_command("pid", make_ctx(is_admin=True), [str(pid), "--native"])
    assert result.data["native"] is True
    if result.unreadable:  # py-spy 0.4.3 cannot read pyenv's Python 3.11 with --native
        assert result.unreadable[f"pid {pid}"].endswith("try without --native")
    else:
        assert result.stack_groups[0].where.function == "load_next_batch"


SSH_ON = {"ssh": True}


def test_with_ssh_enabled_py_spy_runs_through_batch_mode_ssh_on_the_named_host():
    assert pid_command.remote_prefix({"ssh": True}, "gpu-node-01") == [
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "--", "gpu-node-01"]


def test_an_unreachable_host_is_reported_as_an_ssh_failure_not_a_crash(host, make_ctx):
    require(shutil.which("ssh") is not None, "the ssh client is not installed (openssh-client)")
    result = host.run_command("pid", make_ctx(is_admin=True, settings=SSH_ON),
                              ["4242", "--host", "gpu-node-01.invalid"])
    assert result.status == "error"
    assert result.unreadable["pid 4242"].startswith("pid 4242: ssh failed: ssh: Could not resolve hostname")


def test_a_user_cannot_trace_on_a_host_where_ownership_cannot_be_checked(host, make_ctx):
    require(shutil.which("ssh") is not None, "the ssh client is not installed (openssh-client)")
    result = host.run_command("pid", make_ctx(cluster_user="alice", settings=SSH_ON),
                              ["4242", "--host", "gpu-node-01.invalid"])
    assert result.status == "error" and "not yours or does not exist" in result.summary
    assert result.stack_groups == [] and result.unreadable == {}


def test_a_process_on_another_host_that_changes_user_while_it_is_read_is_not_shown(spawn, host, make_ctx,
                                                                                  pyspy_argv, tmp_path):
    # --host checked the owner once, before py-spy: a process that became another user's (a setuid exec, or an exit
    # and its pid taken by another user's process) in between was read and shown. "ssh" here runs the words on
    # this host; the py-spy it runs first makes the process drop to nobody, as if the race were lost.
    require(os.geteuid() == 0, "a process that changes to another user needs root")
    trigger = tmp_path / "drop-now"
    target = spawn(sys.executable, "-c", (
        "import os, pwd, time\n"
        "def private_work():\n"
        f"    while not os.path.exists({str(trigger)!r}):\n"
        "        time.sleep(0.01)\n"
        "    os.setuid(pwd.getpwnam('nobody').pw_uid)\n"
        "    while True:\n"
        "        time.sleep(3600)\n"
        "private_work()\n")).pid
    fake_ssh = tmp_path / "ssh.py"
    fake_ssh.write_text("import os, sys\nwords = sys.argv[sys.argv.index('--') + 2:]\nos.execvp(words[0], words)\n")
    nobody = pwd.getpwnam("nobody").pw_uid
    pyspy = tmp_path / "py-spy"
    pyspy.write_text(f"#!{sys.executable}\nimport os, pathlib, sys, time\n"
                     f"pathlib.Path({str(trigger)!r}).touch()\n"
                     "for _ in range(2000):  # bounded: until the process is nobody's\n"
                     f"    if f'Uid:\\t{nobody}\\t' in pathlib.Path('/proc/{target}/status').read_text():\n"
                     "        break\n"
                     "    time.sleep(0.01)\n"
                     f"os.execv({pyspy_argv[0]!r}, [{pyspy_argv[0]!r}, *sys.argv[1:]])\n")
    pyspy.chmod(0o755)
    settings = {"ssh": True, "ssh_command": [sys.executable, str(fake_ssh)], "remote_path": str(pyspy)}
    result = host.run_command("pid", make_ctx(cluster_user="root", settings=settings),
                              [str(target), "--host", "gpu-node-01"])
    assert result.status == "error" and result.data["error"] == "not_yours", result.summary
    assert result.stack_groups == [] and "private_work" not in str(result.to_dict())
    assert "became another user's" in result.summary
