"""A torch.distributed (gloo) job that really hangs: one rank never reaches the collective.

Every rank but the odd one (``HANG_ODD_RANK``, default 1) blocks in ``dist.all_reduce`` waiting for it;
the odd one sleeps forever in ``load_next_batch`` (a data loader that never returns). Rank 0 listens on
``HANG_MASTER_ADDR`` (default 127.0.0.1: all ranks on one node; across nodes, rank 0's node address,
with ``GLOO_SOCKET_IFNAME`` naming the interface every node reaches the others by). Started either with ``srun --ntasks=2`` inside sbatch (SLURM knows
each rank as a task: SLURM_PROCID, and ``scontrol listpids`` maps PIDs to ranks) or with ``torchrun
--nproc_per_node=2`` (the ranks are torchrun's children, with RANK in their environment).
"""

import datetime
import multiprocessing
import os
import sys
import time

import torch
import torch.distributed as dist

ODD_RANK = int(os.environ.get("HANG_ODD_RANK", "1"))


def load_next_batch(rank: int) -> torch.Tensor:
    if rank == ODD_RANK:
        while True:  # the stuck input pipeline
            time.sleep(3600)
    return torch.ones(4)


def start_loader_worker() -> None:
    """Like a DataLoader worker: a child process that inherits its rank's environment (RANK too)."""
    worker = multiprocessing.Process(target=time.sleep, args=(7200,), daemon=True)
    worker.start()


def train_step(rank: int) -> None:
    batch = load_next_batch(rank)
    dist.all_reduce(batch)


def main() -> None:
    timeout = datetime.timedelta(hours=2)
    if "RANK" in os.environ:  # started by torchrun: it sets RANK, WORLD_SIZE, MASTER_ADDR/PORT
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
        dist.init_process_group("gloo", timeout=timeout)
    else:  # started by srun: one task per rank
        rank = int(os.environ["SLURM_PROCID"])
        world = int(os.environ["SLURM_NTASKS"])
        port = os.environ.get("HANG_MASTER_PORT", "29533")
        addr = os.environ.get("HANG_MASTER_ADDR", "127.0.0.1")
        dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world,
                                timeout=timeout)
    if os.environ.get("HANG_LOADER_WORKER") == "1":
        start_loader_worker()
    print(f"rank {rank}/{world} initialised", flush=True)
    train_step(rank)
    print(f"rank {rank} done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
