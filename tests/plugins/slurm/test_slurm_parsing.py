"""Parsing what a real Slurm 22.05 cluster printed (tests/fixtures/slurm/, see its README), and the
plain-words tables built on it. No cluster needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracebot.plugin_api import Caller, NotAllowed, UsageError
from tracebot.plugins.pyspy.dump import parse_dump_json
from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.slurm import logpaths
from tracebot.plugins.slurm.access import check_job_access
from tracebot.plugins.slurm.client import SACCT_FIELDS
from tracebot.plugins.slurm.gpus import BrokenTable, GpuProcess, orphans, parse_compute_apps
from tracebot.plugins.slurm.hang import HangTrace, _merge, _srun_reason
from tracebot.plugins.slurm.ids import parse_job_id, parse_node
from tracebot.plugins.slurm.jobinfo import from_sacct, from_scontrol, submit_line_outputs
from tracebot.plugins.slurm.parse import parse_listpids, parse_records, parse_sacct
from tracebot.plugins.slurm.settings import SlurmSettings
from tracebot.plugins.slurm.states import describe_exit, final_state, pending_reason

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"


def record(name: str) -> dict[str, str]:
    return parse_records((FIX / name).read_text())[0]


def test_running_job_record_gives_nodes_elapsed_and_expanded_log_path() -> None:
    job = from_scontrol("6", record("scontrol_show_job_running_patterns.txt"))
    assert (job.job_id, job.name, job.user, job.base_state, job.nodelist) == ("6", "hang", "root", "RUNNING", "vm")
    assert job.elapsed == "00:00:09"
    # scontrol expanded %x %j %u %A and wrote %a as NO_VAL; %N is left for us: the file slurmd really wrote.
    assert logpaths.candidates(job, "vm") == [("stdout", Path("/tmp/slx/hang-6-root-vm-6-4294967294.out"))]


def test_pending_records_keep_the_reason_and_what_was_requested() -> None:
    later = from_scontrol("4", record("scontrol_show_job_pending_begintime.txt"))
    after = from_scontrol("10", record("scontrol_show_job_pending_dependency.txt"))
    assert (later.base_state, later.reason) == ("PENDING", "BeginTime")
    assert "cpu=1" in later.requested
    assert after.reason == "Dependency" and after.dependency.startswith("afterok:4")


def test_array_task_and_het_component_are_named_as_users_write_them() -> None:
    array = [from_scontrol("7", r) for r in parse_records((FIX / "scontrol_show_job_array.txt").read_text())]
    het = [from_scontrol("8", r) for r in parse_records((FIX / "scontrol_show_job_het.txt").read_text())]
    assert sorted(j.display_id for j in array) == ["7_1", "7_2"]
    assert {j.display_id: j.job_id for j in het} == {"8+0": "8", "8+1": "9"}


def test_sacct_rows_give_state_exit_code_and_steps_and_survive_free_text_submit_lines() -> None:
    rows = parse_sacct((FIX / "sacct_mixed.unitsep").read_text().rstrip("\n"), SACCT_FIELDS)
    jobs = {j.display_id: j for j in from_sacct("2", rows)}
    failed = jobs["2"]
    assert failed.base_state == "FAILED" and failed.exit == (1, 0)
    assert [s.step_id for s in failed.steps] == ["batch"]
    assert "--wrap echo starting" in failed.submit_line  # the quotes and ';' of the wrapped command intact
    assert jobs["3"].reason == "JobHeldUser" and jobs["3"].base_state == "CANCELLED"


def test_log_paths_of_forgotten_jobs_come_from_the_sbatch_line() -> None:
    line = "sbatch --parsable -J failer -o /tmp/slx/%x-%j.out --wrap echo -o not-this"
    assert submit_line_outputs(line) == ("/tmp/slx/%x-%j.out", "")
    assert submit_line_outputs("sbatch --output=/a/%A_%a.log -e/a/err-%j.log x.sh") == ("/a/%A_%a.log", "/a/err-%j.log")


def test_listpids_maps_pids_to_task_ranks() -> None:
    rows = parse_listpids((FIX / "scontrol_listpids_srun_2ranks.txt").read_text())
    ranks = {r.pid: r.global_id for r in rows if r.step_id == "0"}
    assert ranks == {7905: 0, 7906: 1}
    assert all(r.global_id is None for r in rows if r.local_id is None)


def test_real_node_dump_groups_rank_1_as_the_odd_one_out_stuck_in_the_data_loader() -> None:
    trace = HangTrace()
    _merge(trace, "vm", json.loads((FIX / "node_dump_2ranks_hang.json").read_text()))
    groups = group_stacks(trace.dumps, trace.hosts)
    odd = [g for g in groups if g.odd_one_out]
    assert [g.ranks for g in odd] == [["1"]]
    assert odd[0].where is not None and odd[0].where.function == "load_next_batch"
    waiting = next(g for g in groups if not g.odd_one_out)
    assert waiting.ranks == ["0"] and waiting.where is not None and waiting.where.function == "all_reduce"


def test_pyspy_json_of_each_rank_is_read_innermost_first() -> None:
    dump = parse_dump_json((FIX / "pyspy_dump_rank0_all_reduce.json").read_text(), 7905)
    assert [f.function for f in dump.frames[:1]] == ["all_reduce"]
    assert dump.frames[-1].function == "<module>"


@pytest.mark.parametrize("word", [
    "1; rm -rf /", "$(id)", "`id`", "1 2", "--help", "-1", "0", "1_2_3", "1+", "1_", "12345678901",
    "../etc/passwd", "1\n2", "123\n", "１２３", "1,2", "1.batch", "", "1+1_2", "abc",
])
def test_anything_but_a_plain_array_or_het_job_id_is_refused(word: str) -> None:
    with pytest.raises(UsageError, match="not a SLURM job id"):
        parse_job_id(word)


@pytest.mark.parametrize("word", ["123", "123_4", "123+1", "4294967294"])
def test_plain_array_and_het_job_ids_are_accepted(word: str) -> None:
    assert parse_job_id(word) == word


@pytest.mark.parametrize("word", ["-oProxyCommand=id", "vm;id", "vm vm", "$(id)", "../x", "", "a" * 80, "vm\n"])
def test_node_names_that_could_be_options_or_shell_are_refused(word: str) -> None:
    with pytest.raises(UsageError):
        parse_node(word)


@pytest.mark.parametrize(("code", "words"), [
    ("BeginTime", "start later"), ("JobHeldUser", "held by its owner"), ("Dependency", "depends on"),
    ("Resources", "not free yet"), ("Priority", "higher priority"), ("QOSMaxJobsPerUserLimit", "QOS"),
    ("AssocGrpGRES", "account"),
])
def test_pending_reasons_are_explained_in_words(code: str, words: str) -> None:
    assert words in pending_reason(code).meaning


def test_an_unknown_reason_is_named_not_guessed() -> None:
    assert "`WeirdNewReason`" in pending_reason("WeirdNewReason").meaning


@pytest.mark.parametrize(("state", "words"), [
    ("COMPLETED", "exited with status 0"), ("FAILED", "non-zero"), ("CANCELLED by 0", "cancelled"),
    ("TIMEOUT", "time limit"), ("OUT_OF_MEMORY", "memory limit"), ("NODE_FAIL", "node"),
    ("PREEMPTED", "higher-priority"),
])
def test_final_states_say_what_they_mean_and_what_to_do(state: str, words: str) -> None:
    info = final_state(state)
    assert words in info.meaning and info.advice


def test_exit_codes_and_signals_are_told_apart() -> None:
    assert describe_exit((3, 0)) == "exit code 3"
    assert describe_exit((0, 9)) == "killed by signal 9 (SIGKILL)"
    assert "SIGTERM" in describe_exit((143, 0))


def test_exit_code_0_53_is_a_job_that_never_started_not_a_kill() -> None:
    said = describe_exit((0, 53))
    assert "never started" in said and "--output" in said
    assert "killed" not in said
    assert describe_exit((0, 40)) == "ended by real-time signal 40 (SIGRTMIN+6)"


def test_real_nvidia_smi_csv_with_header_and_units_is_parsed() -> None:
    procs = parse_compute_apps((FIX / "nvidia_smi_compute_apps_h100.csv").read_text())
    assert [(p.pid, p.process_name, p.used_mib) for p in procs] == [
        (11327, "/root/tools/memhog", 2566), (11328, "/root/tools/memhog", 1542), (11345, "./gpu_burn", 15690)]
    assert procs[0].gpu_uuid.startswith("GPU-")


def test_nvidia_smi_csv_without_header_and_with_commas_in_the_process_name() -> None:
    text = "925944, python, 520, GPU-1\n17, python train.py --a=1,2, 7, GPU-2\nNo running processes found\n"
    procs = parse_compute_apps(text)
    assert [(p.pid, p.process_name, p.used_mib, p.gpu_uuid) for p in procs] == [
        (925944, "python", 520, "GPU-1"), (17, "python train.py --a=1, 2", 7, "GPU-2")]


def test_gpu_processes_of_no_running_job_are_the_zombies() -> None:
    job_pids = {r.pid: r.job_id for r in parse_listpids((FIX / "scontrol_listpids_srun_2ranks.txt").read_text())}
    procs = [GpuProcess(7905, "python", 520, "GPU-0"), GpuProcess(925944, "python", 520, "GPU-0")]
    assert [p.pid for p in orphans(procs, job_pids)] == [925944]


def test_users_trace_only_their_own_jobs_and_admins_any() -> None:
    settings = SlurmSettings()
    check_job_access(Caller("U1", "alice"), "alice", "5", settings)
    check_job_access(Caller("U2", None, is_admin=True), "alice", "5", settings)
    with pytest.raises(NotAllowed, match="not yours"):
        check_job_access(Caller("U3", "bob"), "alice", "5", settings)
    with pytest.raises(NotAllowed, match="not mapped"):
        check_job_access(Caller("U4", None), "alice", "5", settings)
    check_job_access(Caller("U3", "bob"), "alice", "5", SlurmSettings(anyone_may_trace=True))


def test_dump_step_refused_by_a_stopped_slurmd_says_the_nodes_slurmd_did_not_answer() -> None:
    # srun's stderr when tbnode2's slurmd was stopped (the multi-node test cluster, Slurm 22.05.8), verbatim:
    err = "srun: error: Task launch for StepId=643.12 failed on node tbnode2: Communication connection failure\n"
    assert _srun_reason(err) == ("the node's slurmd did not answer the dump step (slurmd down or unreachable): "
                                 "srun: error: Task launch for StepId=643.12 failed on node tbnode2: "
                                 "Communication connection failure")


@pytest.mark.parametrize("where, value", [
    ("JobName=hang", "JobName=x UserId=tracebot(998) StdOut=/etc/tracebot/tracebot.yaml"),  # before the real one
    ("WorkDir=/tmp/slx", "WorkDir=/tmp/x UserId=alice(1001)"),  # after it
])
def test_a_record_whose_name_or_path_spells_an_owner_is_refused_never_taken_as_that_owners(where: str,
                                                                                         value: str) -> None:
    from tracebot.plugins.slurm.parse import AmbiguousRecord

    line = (FIX / "scontrol_show_job_running_patterns.txt").read_text().replace(where, value)
    with pytest.raises(AmbiguousRecord, match="names UserId twice"):
        parse_records(line)


def test_an_accounting_row_whose_name_holds_the_delimiter_is_refused_never_shifted_onto_another_owner() -> None:
    from tracebot.plugins.slurm.parse import AmbiguousRecord

    text = (FIX / "sacct_mixed.unitsep").read_text().rstrip("\n").replace("\x1ffailer\x1f", "\x1fx\x1ftracebot\x1f", 1)
    with pytest.raises(AmbiguousRecord, match="too many"):
        parse_sacct(text, SACCT_FIELDS)


def test_a_process_name_with_a_line_break_cannot_pose_as_a_row_of_another_pid() -> None:
    # a job names its GPU process "x\n1, /usr/sbin/sshd, 100, GPU-1": its row was skipped as prose and pid 1 was
    # read as a leftover GPU process, with `kill 1` as the fix
    text = "4242, x\n1, /usr/sbin/sshd, 100, GPU-1\n925944, python, 520, GPU-1\n"
    with pytest.raises(BrokenTable, match="not a whole row"):
        parse_compute_apps(text)
