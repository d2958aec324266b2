"""A 2-rank torch.distributed (gloo, 127.0.0.1) job that really hangs: rank 1 never reaches the collective.

Rank 0 blocks in ``dist.all_reduce`` waiting for rank 1; rank 1 sleeps forever in ``load_next_batch``
(a data loader that never returns). Started either with ``srun --ntasks=2`` inside sbatch (SLURM knows
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


def load_next_batch(rank: int) -> torch.Tensor:
    if rank == 1:
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
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=timeout)
    if os.environ.get("HANG_LOADER_WORKER") == "1":
        start_loader_worker()
    print(f"rank {rank}/{world} initialised", flush=True)
    train_step(rank)
    print(f"rank {rank} done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
