"""``/trace job`` and ``/trace gpus`` across nodes, on the real multi-node cluster (scripts/slurm/start.sh
--nodes 4: one slurmd per node, each in its own network and UTS namespace, on a private bridge).

As deployed (README "Deploying"): the jobs belong to ``alice``, an ordinary user; tracebot runs as its
service user ``tracebot`` and dumps her ranks through the ``tracebot-as-owner`` privilege, one
``srun --overlap`` step per node. Proven here:

- a 4-node x 2-rank gloo job whose rank 5 (on the third node) never reaches the collective: the answer
  names rank 5 and its host, groups the other 7, and the ranks picture has 8 cells;
- the same job with one node's slurmd stopped: that node is named with the reason, the others reported;
- a real multi-node log (one prefixed output per node) whose first failure is on the second node: the
  answer attributes every error to the host it came from;
- ``/trace gpus`` of another node through ``slurm.node_exec`` (scripts/slurm/node-exec, which enters that
  node's namespaces as ssh would log in to it) sees that node's processes and jobs.
"""

from __future__ import annotations

import io
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from PIL import Image

from tests.plugins.slurm.cluster import (
    DEPLOY_PYTHON,
    DEPLOY_TRACEBOT,
    JOBS,
    PRIVILEGE,
    REPO,
    START,
    STOP,
    _innermost_functions,
    as_user,
    run,
    sbatch_as,
    tracebot,
    user_dir,
    wait_for,
)
from tests.plugins.slurm.test_slurm_gpus import stand_in_nvidia_smi
from tests.support import require
from tracebot.plugins.pyspy.render import cell_box
from tracebot.plugins.slurm.parse import parse_listpids

pytestmark = [pytest.mark.integration]
NODE_EXEC = str(REPO / "scripts" / "slurm" / "node-exec")
NODES = 4
RANKS_PER_NODE = 2
ODD_RANK = 5  # the second rank of the third node
QUEUE_WAIT_S = 240  # the cluster is shared with the other suites' jobs


@dataclass
class MultiNode:
    nodes: list[str]  # the job's nodes, in order: rank r runs on nodes[r // RANKS_PER_NODE]
    config: Path
    alice_dir: Path
    ids: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {"TRACEBOT_CONFIG": str(self.config), "TRACEBOT_KNOWLEDGE": str(REPO / "knowledge")}


def node_address(node: str) -> str:
    out = run(["scontrol", "show", "node", "-o", node]).stdout
    return next(w.split("=", 1)[1] for w in out.split() if w.startswith("NodeAddr="))


def on_node(node: str, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``argv`` run on ``node`` (in its namespaces), as tracebot's node_exec runs it."""
    return run([NODE_EXEC, "--", node, *argv], timeout=timeout, check=False)


def rank_pids(job: str, node: str) -> dict[int, int]:
    """rank -> pid of the job's first step on ``node``, as that node's own slurmd lists them."""
    rows = parse_listpids(on_node(node, "scontrol", "listpids", job).stdout)
    return {r.global_id: r.pid for r in rows if r.step_id == "0" and r.global_id is not None}


@pytest.fixture(scope="module")
def multinode(slurm_cluster: None, deploy_users: None) -> Iterator[MultiNode]:
    listed = run(["sinfo", "-h", "-N", "-p", "multi", "-o", "%N"], check=False).stdout.split()
    nodes = sorted(set(listed), key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))[:NODES]
    require(len(nodes) == NODES, f"partition multi has {len(nodes)} node(s), not {NODES}: "
                                 "run scripts/slurm/start.sh --nodes 4")
    conf_dir = Path(tempfile.mkdtemp(prefix="tracebot-multinode-"))
    conf_dir.chmod(0o755)
    config = conf_dir / "tracebot.yaml"
    config.write_text(yaml.safe_dump({
        "admins": ["U-ADMIN"], "cli": {"admins": ["tracebot"]},
        "slurm": {"as_owner": PRIVILEGE, "node_python": DEPLOY_PYTHON, "node_exec": [NODE_EXEC]},
    }))
    config.chmod(0o644)
    mn = MultiNode(nodes, config, user_dir("alice", "tb-multinode", 0o700))
    master = node_address(nodes[0])
    where = ["-p", "multi", "-N", str(NODES), "-w", ",".join(nodes)]
    mn.ids["hang"] = sbatch_as(
        "alice", "-J", "mn-hang", "-o", f"{mn.alice_dir}/%x-%j.out", *where, f"--ntasks-per-node={RANKS_PER_NODE}",
        f"--export=ALL,HANG_MASTER_ADDR={master},HANG_MASTER_PORT=29721,HANG_ODD_RANK={ODD_RANK},"
        "GLOO_SOCKET_IFNAME=eth0",
        "--wrap", f"srun {DEPLOY_PYTHON} {JOBS / 'hang_train.py'}")
    mn.ids["shard"] = sbatch_as(
        "alice", "-J", "mn-shard", "-o", f"{mn.alice_dir}/%x-%j.out", *where, "--ntasks-per-node=1",
        f"--export=ALL,MASTER_ADDR={master},MASTER_PORT=29722,GLOO_SOCKET_IFNAME=eth0",
        "--wrap", f"srun --kill-on-bad-exit=1 {JOBS / 'per_node.sh'} {DEPLOY_PYTHON} -u {JOBS / 'shard_missing.py'}")
    try:
        yield mn
    finally:
        run(["scancel", *mn.ids.values()], check=False)
        run(["rm", "-rf", str(mn.alice_dir), str(conf_dir)], check=False)


def wait_until_hung(mn: MultiNode, timeout: float = 180) -> None:
    """Bounded poll until py-spy sees every rank where the tests need it: rank 5 in load_next_batch, the
    other seven in all_reduce (each node's ranks found through that node's slurmd)."""
    job = mn.ids["hang"]
    wait_for(job, {"RUNNING"}, timeout=QUEUE_WAIT_S)
    where: dict[int, list[str]] = {}
    for _ in range(int(timeout / 0.5)):
        pids = {rank: pid for node in mn.nodes for rank, pid in rank_pids(job, node).items()}
        where = {rank: _innermost_functions(pid) for rank, pid in pids.items()}
        if len(where) == NODES * RANKS_PER_NODE and all(
                ("load_next_batch" in frames) if rank == ODD_RANK else any("all_reduce" in f for f in frames)
                for rank, frames in where.items()):
            return
        subprocess.run(["sleep", "0.5"], check=True, timeout=5)
    raise AssertionError(f"alice's 8 ranks never all reached their hang: {({r: f[:2] for r, f in where.items()})}")


def as_service(mn: MultiNode, *words: str) -> dict:
    """``tracebot trace … --json`` run by the service user ``tracebot`` (an admin's terminal)."""
    _, doc, _ = tracebot(*words, env=mn.env(), prefix=as_user("tracebot"), exe=DEPLOY_TRACEBOT)
    return doc


def test_rank_on_node_3_that_never_reaches_the_collective_is_named_with_its_host_and_the_other_7_grouped(
        multinode: MultiNode) -> None:
    mn = multinode
    wait_until_hung(mn)
    out = Path(tempfile.mkdtemp(prefix="tracebot-png-"))
    out.chmod(0o777)  # tracebot (the service user) writes the picture there
    try:
        doc = as_service(mn, "job", mn.ids["hang"], "--out", str(out))
        png = next(a for a in doc["attachments"] if a["mimetype"] == "image/png")
        image = Image.open(io.BytesIO(Path(png["path"]).read_bytes())).convert("RGB")
    finally:
        run(["rm", "-rf", str(out)], check=False)
    assert doc["data"]["state"] == "RUNNING" and doc["data"]["job"]["user"] == "alice"
    third = mn.nodes[2]
    groups = [(g["ranks"], g["hosts"], g["odd_one_out"]) for g in doc["stack_groups"]]
    assert groups == [([str(ODD_RANK)], [third], True),
                      (["0", "1", "2", "3", "4", "6", "7"], mn.nodes, False)], doc["summary"]
    assert f"Odd one out: rank {ODD_RANK} on {third} in load_next_batch" in doc["summary"]
    assert "ranks 0–4, 6, 7 wait in all_reduce" in doc["summary"]
    hang = doc["data"]["hang"]
    assert hang["hosts"] == {str(r): mn.nodes[r // RANKS_PER_NODE] for r in range(NODES * RANKS_PER_NODE)}
    assert hang["node_errors"] == {} and doc["unreadable"] == {}
    # The picture: 8 cells in one row, rank 5's in the odd group's colour, nothing where a 9th would be.
    colour = [image.getpixel((x1 - 2, y1 - 2)) for x0, y0, x1, y1 in (cell_box(i, 8) for i in range(8))]
    assert len({colour[r] for r in range(8) if r != ODD_RANK}) == 1 and colour[ODD_RANK] != colour[0]
    assert (255, 255, 255) not in colour
    x1, y1 = cell_box(7, 8)[2], cell_box(7, 8)[3]
    assert image.getpixel((x1 + 14, y1 - 2)) == (255, 255, 255)


@pytest.fixture
def slurmd_stopped(multinode: MultiNode) -> Iterator[str]:
    """The second node's slurmd stopped while alice's job runs on it (its ranks keep running under their
    slurmstepd); started again afterwards, and waited for until that slurmd lists the job's ranks again."""
    mn = multinode
    wait_until_hung(mn)
    node = mn.nodes[1]
    run(["bash", str(STOP), f"slurmd@{node}"], timeout=60)
    try:
        yield node
    finally:
        run(["bash", str(START)], timeout=300)  # waits until every node is idle/mixed/allocated again
        for _ in range(240):
            if sorted(rank_pids(mn.ids["hang"], node)) == [2, 3]:
                break
            subprocess.run(["sleep", "0.5"], check=True, timeout=5)
        else:
            raise AssertionError(f"{node}'s restarted slurmd never listed the job's ranks 2 and 3 again")


def test_node_whose_slurmd_is_stopped_is_named_with_the_reason_and_the_other_nodes_are_reported(
        multinode: MultiNode, slurmd_stopped: str) -> None:
    doc = as_service(multinode, "job", multinode.ids["hang"])
    hang = doc["data"]["hang"]
    assert list(hang["node_errors"]) == [slurmd_stopped]
    assert "slurmd did not answer" in hang["node_errors"][slurmd_stopped]
    assert f"No dump from node {slurmd_stopped} (the node's slurmd did not answer" in doc["summary"]
    assert slurmd_stopped not in hang["hosts"].values() and hang["ranks"] == 6
    assert [(g["ranks"], g["odd_one_out"]) for g in doc["stack_groups"]] == [
        ([str(ODD_RANK)], True), (["0", "1", "4", "6", "7"], False)]
    assert doc["status"] != "error"


def test_multi_node_log_whose_first_failure_is_on_node_2_attributes_every_error_to_its_host(
        multinode: MultiNode) -> None:
    mn = multinode
    job = mn.ids["shard"]
    wait_for(job, {"FAILED"}, timeout=QUEUE_WAIT_S)
    doc = as_service(mn, "job", job)
    second = mn.nodes[1]
    log = doc["data"]["logs"][0]
    assert log["path"].startswith(str(mn.alice_dir)) and log.get("unreadable") is None  # read as alice
    first = log["errors"][0]
    assert (first["rank"], first["host"]) == ("1", second)
    assert f"First error, mn-shard-{job}.out line" in doc["summary"]
    assert f"(rank 1 on {second}): `{second}: [rank1]: FileNotFoundError" in doc["summary"]
    # Every error line names the node it came from: the rank's own node (rank r ran on node r), and for
    # SLURM's "slurmstepd-<node>: error: ..." lines, that node.
    hosts = {(e["rank"], e["host"]) for e in log["errors"] if e["host"]}
    assert hosts and all(host in mn.nodes for _, host in hosts)
    assert all(host == mn.nodes[int(rank)] for rank, host in hosts if rank)
    assert any(rank is None for rank, _ in hosts)  # slurmstepd's own line, attributed to its node


def test_gpus_of_another_node_goes_through_node_exec_and_sees_that_nodes_jobs(
        multinode: MultiNode, tmp_path: Path) -> None:
    mn = multinode
    wait_until_hung(mn)
    node = mn.nodes[2]
    assert node != socket.gethostname().split(".")[0]  # tracebot runs on this host, not on the node
    odd = rank_pids(mn.ids["hang"], node)[ODD_RANK]
    stray = subprocess.Popen([NODE_EXEC, node, "sleep", "300"], start_new_session=True)  # no job's
    try:
        env = stand_in_nvidia_smi(tmp_path, [f"{odd}, python, 30712, GPU-1", f"{stray.pid}, python, 520, GPU-1"])
        code, doc, _ = tracebot("gpus", node, env={**env, **mn.env()})
    finally:
        stray.kill()
        stray.wait(timeout=10)
    # Only the node's own slurmd knows the job's processes there: asked on this host, rank 5 would be a stray.
    assert doc["data"]["job_of_pid"][str(odd)] == mn.ids["hang"]
    assert doc["data"]["orphans"] == [stray.pid]
    assert doc["status"] == "warning"
