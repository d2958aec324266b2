"""Security of /trace job on the real cluster, with real Unix users (scripts/deploy/test-setup.sh):
tracebot runs as the unprivileged service user ``tracebot`` with the one privilege README "Deploying"
describes; ``alice`` and ``bob`` submit jobs. Each finding of the security review has its test:

- a package planted in /tmp (the old working directory of the node dump) never runs;
- a job's log is read with its owner's rights only: bob's 0600 log through alice's job, ``%t`` as a
  glob of bob's directory, and ``/proc/.../environ`` (tracebot's own, or another user's process) leak
  nothing, whoever runs tracebot;
- an admin traces alice's hung job while tracebot runs as ``tracebot``, and alice (mapped through
  ``users:``) cannot trace bob's job;
- a job whose name or script path spells another owner (`` UserId=alice(1001)``) is traced as nobody's:
  neither tracebot nor its privilege believes it; nor does tracebot believe an accounting row spelled in a
  step's command line, nor a name that spells the nodes to py-spy;
- the privilege dumps another user's array task whose own id is the array's (scontrol prints its siblings too);
- a job that writes a node dump of its own into the dump step's output never gets it shown.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.plugins.slurm.cluster import (
    DEPLOY_PYTHON,
    DEPLOY_TRACEBOT,
    JOBS,
    PRIVILEGE,
    REPO,
    Jobs,
    _innermost_functions,
    as_user,
    rank_pid,
    run,
    sbatch_as,
    tracebot,
    user_dir,
    wait_for,
    wait_until_hung,
)
from tests.support import require
from tracebot.plugins.slurm import signed
from tracebot.plugins.slurm.client import SACCT_FIELDS, SlurmCli
from tracebot.plugins.slurm.jobinfo import from_sacct
from tracebot.plugins.slurm.parse import parse_records

pytestmark = [pytest.mark.integration]
SECRET = f"RuntimeError: bob-secret-{uuid.uuid4().hex}"
CANARY = f"RuntimeError: environ-canary-{uuid.uuid4().hex}"
PRIVATE = f"RuntimeError: private-canary-{uuid.uuid4().hex}"
ALICE_RANKS = 5  # many_ranks.py: rank 4 is the odd one out
QUEUE_WAIT_S = 240  # the cluster is shared with other suites: a 1-CPU job may queue behind theirs


@dataclass
class Deployment:
    config: Path
    alice_dir: Path
    bob_dir: Path
    ids: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {"TRACEBOT_CONFIG": str(self.config), "TRACEBOT_KNOWLEDGE": str(REPO / "knowledge")}


@pytest.fixture(scope="module")
def deployment(deploy_users: None) -> Iterator[Deployment]:
    conf_dir = Path(tempfile.mkdtemp(prefix="tracebot-deploy-"))  # pytest's tmp is 0700: tracebot could not read it
    conf_dir.chmod(0o755)
    config = conf_dir / "tracebot.yaml"
    config.write_text(yaml.safe_dump({
        "admins": ["U-ADMIN"], "users": {"U-ALICE": "alice", "U-BOB": "bob"},
        "cli": {"admins": ["tracebot"]},  # `tracebot trace` run by the service user is an admin's terminal
        "slurm": {"as_owner": PRIVILEGE, "node_python": DEPLOY_PYTHON},
    }))
    config.chmod(0o644)
    dep = Deployment(config, user_dir("alice", "tb-alice", 0o700), user_dir("bob", "tb-bob", 0o755))
    secret = dep.bob_dir / "secret.log"
    run([*as_user("bob"), "sh", "-c", f"umask 077 && printf '%s\\n' '{SECRET}' > {secret}"])
    dep.ids["alice_hang"] = sbatch_as("alice", "-J", "alice-hang", "-o", f"{dep.alice_dir}/%x-%j.out",
                                      "-n", str(ALICE_RANKS), "--overcommit",
                                      "--wrap", f"srun {DEPLOY_PYTHON} {JOBS / 'many_ranks.py'}")
    dep.ids["bob_job"] = sbatch_as("bob", "-J", "bob-job", "-o", f"{dep.bob_dir}/%x-%j.out",
                                   "--wrap", f"echo '{SECRET}'; sleep 600")
    dep.ids["into_bobs_log"] = sbatch_as("alice", "-J", "into-bobs-log", "-o", str(secret), "--wrap", "true")
    dep.ids["glob_bobs_dir"] = sbatch_as("alice", "-J", "glob-bobs-dir", "-o", f"{dep.bob_dir}/%t", "--wrap", "true")
    dep.ids["own_environ"] = sbatch_as("alice", "-J", "own-environ", "-o", "/proc/self/environ", "--wrap", "true")
    try:
        yield dep
    finally:
        run(["scancel", *dep.ids.values()], check=False)
        run(["rm", "-rf", str(dep.alice_dir), str(dep.bob_dir), str(conf_dir)], check=False)


def wait_until_alice_hung(dep: Deployment) -> None:
    """Bounded poll until py-spy sees rank 4 in read_shard (the ranks are up and where the test needs them)."""
    job = dep.ids["alice_hang"]
    wait_for(job, {"RUNNING"}, timeout=QUEUE_WAIT_S)
    for _ in range(240):
        try:
            if "read_shard" in _innermost_functions(rank_pid(job, 4)):
                return
        except StopIteration:
            pass
        subprocess.run(["sleep", "0.5"], check=True, timeout=5)
    raise AssertionError("alice's ranks never reached read_shard")


def as_service(dep: Deployment, *words: str) -> dict:
    """``tracebot trace … --json`` run by the service user ``tracebot`` (an admin's terminal)."""
    _, doc, _ = tracebot(*words, env=dep.env(), prefix=as_user("tracebot"), exe=DEPLOY_TRACEBOT)
    return doc


def as_slack_user(dep: Deployment, slack_user: str, *words: str) -> dict:
    """A /trace command from a Slack user, answered by tracebot running as ``tracebot``."""
    proc = subprocess.run([*as_user("tracebot"), DEPLOY_PYTHON, str(Path(__file__).parent / "as_slack_user.py"),
                           slack_user, *words], capture_output=True, text=True, timeout=120, cwd="/",
                          env={**os.environ, **dep.env()}, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_admin_traces_alices_hung_job_as_the_tracebot_user_and_names_the_odd_rank(deployment: Deployment) -> None:
    wait_until_alice_hung(deployment)
    doc = as_service(deployment, "job", deployment.ids["alice_hang"])
    assert doc["data"]["state"] == "RUNNING" and doc["data"]["job"]["user"] == "alice"
    assert [g["ranks"] for g in doc["stack_groups"] if g["odd_one_out"]] == [["4"]]
    assert "Odd one out: rank 4 in read_shard" in doc["summary"]
    assert doc["unreadable"] == {}
    # alice's log sits in her 0700 directory: only her rights could open it.
    log = doc["data"]["logs"][0]
    assert log["path"].startswith(str(deployment.alice_dir)) and log.get("unreadable") is None
    assert log["size"] > 0


def test_alice_cannot_trace_bobs_job_and_bob_can(deployment: Deployment) -> None:
    wait_for(deployment.ids["bob_job"], {"RUNNING"}, timeout=QUEUE_WAIT_S)
    refused = as_slack_user(deployment, "U-ALICE", "job", deployment.ids["bob_job"])
    assert refused["data"]["error"] == "not_allowed" and "not yours" in refused["summary"]
    assert SECRET not in json.dumps(refused)
    own = as_slack_user(deployment, "U-BOB", "job", deployment.ids["bob_job"])
    assert any(SECRET in e["text"] for e in own["data"]["logs"][0]["errors"])  # the same log, its owner asking


@pytest.mark.parametrize("runner", ["root", "tracebot"])
def test_bobs_0600_log_named_as_alices_output_is_never_read(deployment: Deployment, runner: str) -> None:
    wait_for(deployment.ids["into_bobs_log"], {"FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
    doc = trace_as_runner(deployment, runner, deployment.ids["into_bobs_log"])
    assert SECRET not in json.dumps(doc)
    log = doc["data"]["logs"][0]
    assert log["path"] == str(deployment.bob_dir / "secret.log") and log["unreadable"]


@pytest.mark.parametrize("runner", ["root", "tracebot"])
def test_percent_t_never_globs_other_files_of_the_directory(deployment: Deployment, runner: str) -> None:
    wait_for(deployment.ids["glob_bobs_dir"], {"FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
    doc = trace_as_runner(deployment, runner, deployment.ids["glob_bobs_dir"])
    assert SECRET not in json.dumps(doc)
    assert [log["path"] for log in doc["data"]["logs"]] == [str(deployment.bob_dir / "0")]


@pytest.mark.parametrize("runner", ["root", "tracebot"])
def test_proc_self_environ_as_a_log_path_leaks_nothing_of_tracebots_environment(deployment: Deployment,
                                                                                runner: str) -> None:
    wait_for(deployment.ids["own_environ"], {"FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
    doc = trace_as_runner(deployment, runner, deployment.ids["own_environ"], extra_env={"TB_CANARY": CANARY})
    assert CANARY not in json.dumps(doc)
    log = doc["data"]["logs"][0]
    assert log["path"] == "/proc/self/environ" and "/proc" in log["unreadable"]


def test_another_users_proc_environ_as_a_log_path_leaks_nothing(deployment: Deployment) -> None:
    bobs = subprocess.Popen(["setpriv", "--reuid=bob", "--regid=bob", "--init-groups", "sleep", "300"],
                            env={"PATH": os.environ["PATH"], "TB_CANARY": CANARY}, start_new_session=True)
    try:
        job = sbatch_as("alice", "-J", "bobs-environ", "-o", f"/proc/{bobs.pid}/environ", "--wrap", "true")
        try:
            wait_for(job, {"FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
            for runner in ("root", "tracebot"):
                doc = trace_as_runner(deployment, runner, job)
                assert CANARY not in json.dumps(doc), runner
                assert "/proc" in doc["data"]["logs"][0]["unreadable"]
        finally:
            run(["scancel", job], check=False)
    finally:
        bobs.kill()
        bobs.wait(timeout=10)


def _private_file(user: str, directory: Path) -> Path:
    """A 0600 file of ``user`` holding :data:`PRIVATE`."""
    path = directory / f"private-{uuid.uuid4().hex[:8]}.log"
    run([*as_user(user), "sh", "-c", f"umask 077 && printf '%s\\n' '{PRIVATE}' > {path}"])
    return path


def test_a_job_whose_script_path_spells_another_owner_is_refused_by_tracebot_and_by_its_privilege(
        deployment: Deployment) -> None:
    # bob's script path carries " UserId=alice(N)" after the real UserId in scontrol's line, and his -o names
    # alice's 0600 file: the privilege kept the last UserId, dropped to alice and opened it for bob
    alices = _private_file("alice", deployment.alice_dir)
    script = deployment.bob_dir / f"run UserId=alice({pwd.getpwnam('alice').pw_uid})"
    run([*as_user("bob"), "sh", "-c", f"printf '#!/bin/sh\\nsleep 600\\n' > '{script}' && chmod 755 '{script}'"])
    job = sbatch_as("bob", "-J", "posing", "-o", str(alices), str(script))
    try:
        wait_for(job, {"RUNNING", "FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
        doc = as_slack_user(deployment, "U-BOB", "job", job)
        assert PRIVATE not in json.dumps(doc)
        assert doc["data"]["error"] == "slurm" and "names UserId twice" in doc["summary"]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with ours, theirs:  # the privilege asked directly, as tracebot asks it
            proc = subprocess.run([*as_user("tracebot"), *PRIVILEGE, "log", job, str(alices)], stdout=theirs,
                                  stderr=subprocess.PIPE, text=True, timeout=60, check=False)
        assert proc.returncode == 2 and "names UserId twice" in proc.stderr, proc.stderr
    finally:
        run(["scancel", job], check=False)


def test_a_job_named_as_tracebots_own_is_never_read_with_tracebots_rights(deployment: Deployment) -> None:
    # "x UserId=tracebot(N)" before the real UserId: tracebot kept the first, took bob's job for its own and
    # opened the -o bob chose (a file only tracebot may read) with its own rights, for the admin bob asked
    own_dir = Path(tempfile.mkdtemp(prefix="tracebot-own-"))
    own_dir.chmod(0o755)
    shutil.chown(own_dir, "tracebot")
    tracebots = _private_file("tracebot", own_dir)
    name = f"x UserId=tracebot({pwd.getpwnam('tracebot').pw_uid})"
    job = sbatch_as("bob", "-J", name, "-o", str(tracebots), "--wrap", "sleep 600")
    try:
        wait_for(job, {"RUNNING", "FAILED", "COMPLETED"}, timeout=QUEUE_WAIT_S)
        doc = as_slack_user(deployment, "U-ADMIN", "job", job)
        assert PRIVATE not in json.dumps(doc)
        assert doc["data"]["error"] == "slurm" and "names UserId twice" in doc["summary"]
    finally:
        run(["scancel", job], check=False)
        run(["rm", "-rf", str(tracebots.parent)], check=False)


def test_a_job_named_as_if_it_ran_on_many_nodes_is_refused_never_fanned_out(deployment: Deployment) -> None:
    # JobName comes before NodeList and the first was kept: bob's /trace of his own job started a py-spy step
    # through the privilege for each of 99,999 nodes, on the host and the controller everyone's /trace needs
    job = sbatch_as("bob", "-J", "x NodeList=n[1-99999]", "-o", f"{deployment.bob_dir}/%j.out", "--wrap", "sleep 600")
    try:
        wait_for(job, {"RUNNING"}, timeout=QUEUE_WAIT_S)
        doc = as_slack_user(deployment, "U-BOB", "job", job)
        assert doc["data"]["error"] == "slurm" and "names NodeList twice" in doc["summary"]
    finally:
        run(["scancel", job], check=False)


def test_a_row_spelled_in_a_steps_command_line_is_never_taken_for_tracebots_own(deployment: Deployment) -> None:
    # bob's srun argument holds a newline and then a whole accounting row in the delimiter tracebot used to ask
    # sacct for (\x1f), with his job's id, User "tracebot" and an -o of tracebot's: it replaced the real row, and
    # tracebot read that -o with its own rights once the controller had forgotten the job
    values = dict.fromkeys(SACCT_FIELDS, "")
    values.update(JobID="JID", JobIDRaw="JID", JobName="x", User="tracebot", State="COMPLETED", ExitCode="0:0",
                  SubmitLine="sbatch -o /etc/tracebot/tracebot.yaml x")
    row = deployment.bob_dir / f"row-{uuid.uuid4().hex[:8]}"
    row.write_text("\x1f".join(values[f] for f in SACCT_FIELDS))
    row.chmod(0o644)
    script = deployment.bob_dir / f"forge-{uuid.uuid4().hex[:8]}.sh"
    script.write_text(f'#!/bin/sh\nsrun true "$(printf \'\\n\'; sed "s/JID/$SLURM_JOB_ID/g" {row})"\n')
    script.chmod(0o755)
    job = sbatch_as("bob", "-J", "forger", "-o", f"{deployment.bob_dir}/%x-%j.out", str(script))
    try:
        wait_for(job, {"COMPLETED", "FAILED"}, timeout=QUEUE_WAIT_S)
        cli = SlurmCli()
        # slurmdbd records the step a moment after the job ends, and for that moment its job row may name
        # root as the user (Slurm 22.05, seen here): wait for both to settle
        for _ in range(120):
            jobs = from_sacct(job, cli.accounting(job))
            if jobs and "0" in [s.step_id for s in jobs[0].steps] and jobs[0].user != "root":
                break
            subprocess.run(["sleep", "0.5"], check=True, timeout=5)
        assert [(j.job_id, j.user) for j in jobs] == [(job, "bob")]
        assert "0" in [s.step_id for s in jobs[0].steps]
    finally:
        run(["scancel", job], check=False)


def test_another_users_array_task_that_carries_the_arrays_own_id_is_dumped_through_the_privilege(
        deployment: Deployment) -> None:
    # "scontrol show job <array id>" prints every task, and the last task to start keeps the array's own id: the
    # privilege took an answer of two lines for a job the controller forgot and refused the dump, "not running"
    array = sbatch_as("alice", "--array=1-2", "-J", "alice-array", "-o", f"{deployment.alice_dir}/arr-%A_%a.out",
                      "--wrap", 'if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then exit 0; fi; sleep 600')
    try:
        wait_for(f"{array}_2", {"RUNNING"}, timeout=QUEUE_WAIT_S)
        records = parse_records(run(["scontrol", "show", "job", "-o", array]).stdout)
        assert len(records) == 2, records  # the finished task 1 is still listed beside it
        own = next(r for r in records if r["JobId"] == array)
        key = signed.new_key()  # what tracebot writes to the privilege's stdin, for the dump to sign with
        proc = subprocess.run([*as_user("tracebot"), *PRIVILEGE, "dump", array, own["BatchHost"], "60", "10"],
                              input=f"{key}\n", capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        assert len(signed.read_signed(key, proc.stdout).docs) == 1  # the node's dump, as tracebot reads it
    finally:
        run(["scancel", array], check=False)


def _forger_log(path: Path) -> list[str]:
    return [ln for ln in path.read_text(errors="replace").splitlines() if ln.startswith("forger: ")] \
        if path.exists() else []


def test_a_job_that_writes_a_dump_of_its_own_into_the_dump_step_never_gets_it_shown(deployment: Deployment) -> None:
    # alice's rank 0 opens the dump step's stdout through /proc (hers to open: the step runs as her) and, once the
    # dumper has ended, writes a document of its own: the last JSON line of the step's output was taken as her
    # node's dump, so the admin read "rank 0 all fine" and a rank 99 that never existed
    log = deployment.alice_dir / f"forge-{uuid.uuid4().hex[:8]}.out"
    job = sbatch_as("alice", "-J", "forge-dump", "-o", str(log), "-n", "2", "--overcommit",
                    "--wrap", f"srun {DEPLOY_PYTHON} {JOBS / 'forge_dump.py'}")
    try:
        wait_for(job, {"RUNNING"}, timeout=QUEUE_WAIT_S)
        for _ in range(240):
            if log.exists() and {"rank 0 up", "rank 1 up"} <= set(log.read_text().splitlines()):
                break
            subprocess.run(["sleep", "0.5"], check=True, timeout=5)
        doc = as_service(deployment, "job", job)
        text = json.dumps(doc)
        assert "all_ranks_fine_forged" not in text and "invented_rank_forged" not in text, doc["summary"]
        # the job's two ranks, each with its own stack, or unreadable where the job wrote into the output of the
        # py-spy that read it (a program its owner may read, so a child the dump runs is the job's to garble)
        shown = {r: [f["function"] for f in g["frames"]] for g in doc["stack_groups"] for r in g["ranks"]}
        assert sorted([*shown, *doc["unreadable"]]) == ["0", "1"], (shown, doc["unreadable"])
        assert all(rank in doc["unreadable"] or honest in shown[rank]
                   for rank, honest in (("0", "watch_for_the_dumper"), ("1", "honest_wait"))), shown
        # and the forger did try: it found the dump step, looked for the key where a job can look, and could not
        # even open the step's output: the privilege runs the dump with an execute-only interpreter, undumpable
        # from its first instruction (install-privilege.sh), so not even its first instant is the job's
        tried = _forger_log(log)
        dumpers = {ln.split()[3].rstrip(":") for ln in tried if ln.startswith("forger: saw pid") and "srun" not in ln}
        assert dumpers, tried
        assert not [ln for ln in tried if "key-like values" in ln and not ln.endswith(": 0 key-like values")], tried
        assert not [ln for ln in tried if ln.split()[2] in dumpers and ln.endswith("stdout: opened")], "\n".join(tried)
    finally:
        run(["scancel", job], check=False)


def trace_as_runner(dep: Deployment, runner: str, job: str, extra_env: dict[str, str] | None = None) -> dict:
    """Admin's /trace job from tracebot running as root (the old deployment) or as the service user."""
    env = {**dep.env(), **(extra_env or {})}
    if runner == "root":
        _, doc, _ = tracebot("job", job, env=env)
    else:
        _, doc, _ = tracebot("job", job, env=env, prefix=as_user("tracebot"), exe=DEPLOY_TRACEBOT)
    return doc


@pytest.fixture
def planted(tmp_path: Path) -> Iterator[Path]:
    """A `tracebot` package in /tmp (the node dump's old working directory, and tracebot's own cwd in these
    tests) that would leave a marker file, as any local user could plant it."""
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir(mode=0o777)
    marker_dir.chmod(0o777)
    marker = marker_dir / "ran"
    package = Path("/tmp/tracebot")
    require(not package.exists(), f"{package} already exists; another run may be planting it")
    package.mkdir()
    # It records who imported it: on a shared machine, any process that runs Python from /tmp would.
    (package / "__init__.py").write_text(
        "import os, sys\n"
        f"open({str(marker)!r}, 'a').write(f'planted code ran in pid {{os.getpid()}} (uid {{os.getuid()}}, "
        "parent {os.getppid()}, cwd {os.getcwd()}): {sys.argv!r}\\n')\n")
    try:
        yield marker
    finally:
        for child in package.rglob("*"):
            child.unlink() if child.is_file() else None
        for child in sorted(package.rglob("*"), reverse=True):
            child.rmdir()
        package.rmdir()


def test_package_planted_in_tmp_never_runs_and_the_trace_still_works(jobs: Jobs, deployment: Deployment,
                                                                     planted: Path) -> None:
    wait_until_hung(jobs)
    _, own, _ = tracebot("job", jobs.ids["hang"])  # root's job, dumped by root's srun step
    assert [g["ranks"] for g in own["stack_groups"] if g["odd_one_out"]] == [["1"]]
    wait_until_alice_hung(deployment)
    alices = as_service(deployment, "job", deployment.ids["alice_hang"])  # alice's job, through the privilege
    assert [g["ranks"] for g in alices["stack_groups"] if g["odd_one_out"]] == [["4"]]
    assert not planted.exists(), planted.read_text()
