"""Many srun ranks, no torch: every rank waits in ``wait_for_peers`` except rank 4, stuck in
``read_shard``. Enough ranks (> 8) that /trace job attaches the picture of ranks by stack group."""

import os
import time


def read_shard() -> None:
    while True:
        time.sleep(3600)


def wait_for_peers() -> None:
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    print(f"rank {os.environ['SLURM_PROCID']} up", flush=True)
    if os.environ["SLURM_PROCID"] == "4":
        read_shard()
    else:
        wait_for_peers()
