"""A job that fails the way a second launcher on the same MASTER_PORT fails: torch.distributed's TCP
store cannot listen because the port is already taken (here by this script itself, to be certain)."""

import datetime
import socket

import torch.distributed as dist

holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
holder.bind(("127.0.0.1", 0))
holder.listen(1)
port = holder.getsockname()[1]
print(f"training step 0 | loss 2.31 | MASTER_PORT={port}", flush=True)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1,
                        timeout=datetime.timedelta(seconds=20))
