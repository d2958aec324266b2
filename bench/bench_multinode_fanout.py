"""The hang trace's fan-out across nodes: a real hung gloo job on 1, 2, 4, 8 nodes, every rank dumped.

For each node count N, one job of N nodes x ``--ranks-per-node`` ranks (tests/plugins/slurm/jobs/
hang_train.py: the last rank never reaches the collective) runs on the test cluster's namespace nodes
(scripts/slurm/start.sh --nodes 8). Once py-spy sees every rank in place, tracebot's fan-out
(``trace_job``: one ``srun --overlap`` step per node, all in parallel) is timed ``--repeat`` times, and so is
the whole ``tracebot trace --json job <id>`` (lookup, fan-out, log, answer). Prints one JSON object: per
N the median seconds and the ratio to one node's (target: <= 2x at 8 nodes). Jobs run one at a time, so
memory holds one job's ranks; each is cancelled at the end, even on Ctrl-C.

    sudo .venv/bin/python bench/bench_multinode_fanout.py [--nodes 1,2,4,8] [--ranks-per-node 4] [--repeat 5]

Needs root (it starts the cluster with --nodes max(N) and puts it back to the node count it had after).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.plugins.slurm.client import SlurmCli  # noqa: E402
from tracebot.plugins.slurm.hang import HangTrace, trace_job  # noqa: E402
from tracebot.plugins.slurm.settings import SlurmSettings  # noqa: E402

START = REPO / "scripts" / "slurm" / "start.sh"
HANG = REPO / "tests" / "plugins" / "slurm" / "jobs" / "hang_train.py"
TRACEBOT = str(Path(sys.executable).parent / "tracebot")


def sh(argv: list[str], timeout: float = 60) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True).stdout


def configured_nodes() -> int | None:
    for line in Path("/etc/slurm/slurm.conf").read_text().splitlines():
        if line.startswith("# nodes: "):
            return int(line.split(": ", 1)[1])
    return None


def node_address(node: str) -> str:
    out = sh(["scontrol", "show", "node", "-o", node])
    return next(w.split("=", 1)[1] for w in out.split() if w.startswith("NodeAddr="))


def submit(nodes: list[str], per_node: int, logs: Path) -> str:
    ranks = len(nodes) * per_node
    env = (f"ALL,HANG_MASTER_ADDR={node_address(nodes[0])},HANG_MASTER_PORT={29800 + len(nodes)},"
           f"HANG_ODD_RANK={ranks - 1},GLOO_SOCKET_IFNAME=eth0")
    out = sh(["sbatch", "--parsable", "-J", f"bench-{len(nodes)}n", "-o", str(logs / "%x-%j.out"), "-p", "multi",
              "-N", str(len(nodes)), "-w", ",".join(nodes), f"--ntasks-per-node={per_node}", f"--export={env}",
              "--wrap", f"srun {sys.executable} {HANG}"])
    return out.strip().split(";")[0]


def settled(trace: HangTrace, ranks: int) -> bool:
    """Every rank dumped, the last one in load_next_batch and the others in all_reduce."""
    if len(trace.dumps) != ranks or trace.unreadable or trace.node_errors:
        return False
    odd = str(ranks - 1)
    return all(isinstance(frames, list) and any(
        f.function == ("load_next_batch" if rank == odd else "all_reduce") for f in frames)
        for rank, frames in trace.dumps.items())


def wait_settled(cli: SlurmCli, job: str, nodes: list[str], settings: SlurmSettings, ranks: int,
                 timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = sh(["squeue", "-h", "-j", job, "-o", "%T"]).strip()
        if state == "RUNNING" and settled(trace_job(cli, job, nodes, settings, time.monotonic() + 60), ranks):
            return
        time.sleep(0.5)
    raise RuntimeError(f"job {job} never settled into its hang on {len(nodes)} node(s)")


def measure(n: int, per_node: int, repeat: int, logs: Path) -> dict[str, object]:
    nodes = [f"tbnode{k}" for k in range(1, n + 1)]
    cli, settings = SlurmCli(), SlurmSettings()
    job = submit(nodes, per_node, logs)
    try:
        wait_settled(cli, job, nodes, settings, n * per_node)
        fanout, whole = [], []
        for _ in range(repeat):
            trace = trace_job(cli, job, nodes, settings, time.monotonic() + 60)
            assert settled(trace, n * per_node), trace.node_errors or trace.unreadable
            fanout.append(trace.seconds)
            started = time.monotonic()
            doc = json.loads(sh([TRACEBOT, "trace", "--json", "job", job], timeout=120))
            whole.append(time.monotonic() - started)
            assert doc["data"]["hang"]["ranks"] == n * per_node, doc["summary"]
        return {"nodes": n, "ranks": n * per_node, "fanout_s": round(statistics.median(fanout), 3),
                "fanout_runs_s": [round(s, 3) for s in fanout], "trace_command_s": round(statistics.median(whole), 3)}
    finally:
        subprocess.run(["scancel", job], timeout=30, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="1,2,4,8")
    ap.add_argument("--ranks-per-node", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_multinode_fanout: run as root (it starts the SLURM test cluster)")
    counts = [int(n) for n in args.nodes.split(",")]
    before = configured_nodes()
    subprocess.run(["bash", str(START), "--nodes", str(max(counts))], timeout=600, check=True)
    logs = Path("/tmp/tracebot-bench-multinode")
    logs.mkdir(exist_ok=True)
    try:
        rows = [measure(n, args.ranks_per_node, args.repeat, logs) for n in counts]
    finally:
        if before is not None and before != max(counts):
            subprocess.run(["bash", str(START), "--nodes", str(before)], timeout=600, check=True)
    base, base_cmd = rows[0]["fanout_s"], rows[0]["trace_command_s"]
    for row in rows:
        row["fanout_vs_1_node"] = round(float(row["fanout_s"]) / float(base), 2)
        row["trace_command_vs_1_node"] = round(float(row["trace_command_s"]) / float(base_cmd), 2)
    print(json.dumps({"bench": "multinode_fanout", "ranks_per_node": args.ranks_per_node, "repeat": args.repeat,
                      "cpus": os.cpu_count(), "python": platform.python_version(), "rows": rows,
                      "target": "fanout at the largest node count <= 2x one node's",
                      "met": rows[-1]["fanout_vs_1_node"] <= 2.0}, indent=1))


if __name__ == "__main__":
    main()
