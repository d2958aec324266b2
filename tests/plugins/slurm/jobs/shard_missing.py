"""A multi-node gloo job (one rank per node, started by srun) that fails on its second node: after a few
all_reduce steps, the rank on SLURM node 1 (the job's second node) opens a data shard that does not
exist and dies with FileNotFoundError. The others block in their next all_reduce until srun
(--kill-on-bad-exit) ends them, so node 2's error is the log's first.

MASTER_ADDR/MASTER_PORT: rank 0's node address and a free port; GLOO_SOCKET_IFNAME: the interface the
nodes reach each other by.
"""

import datetime
import os

import torch
import torch.distributed as dist

DATA = "/nonexistent-dataset"


def load_shard(rank: int, step: int) -> torch.Tensor:
    if os.environ["SLURM_NODEID"] == "1" and step == 3:
        with open(f"{DATA}/shard-{rank:05d}.bin", "rb") as f:  # the shard this node was given is missing
            return torch.frombuffer(bytearray(f.read()), dtype=torch.float32)
    return torch.ones(4)


def main() -> None:
    rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
    dist.init_process_group("gloo", init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=world, timeout=datetime.timedelta(minutes=10))
    for step in range(1, 1000):
        batch = load_shard(rank, step)
        dist.all_reduce(batch)
        print(f"[rank{rank}]: step {step} | loss {2.5 / step:.3f}", flush=True)


if __name__ == "__main__":
    main()
