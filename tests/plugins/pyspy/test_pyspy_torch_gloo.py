"""A real torch.distributed (gloo) job on 127.0.0.1 where rank 1 never reaches the all_reduce."""

from __future__ import annotations

import importlib.util
import socket
import sys
import textwrap

import pytest

from tests.plugins.pyspy.hung import wait_for_ranks, wait_until_in
from tests.support import require

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GLOO_JOB = textwrap.dedent("""\
    import datetime
    import os
    import subprocess
    import sys
    import threading

    import torch
    import torch.distributed as dist


    def load_next_batch():
        threading.Event().wait()


    def train(rank):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}", rank=rank,
                                world_size=2, timeout=datetime.timedelta(minutes=10))
        if rank == 1:
            load_next_batch()  # this rank never joins the collective
        dist.all_reduce(torch.ones(4))


    if __name__ == "__main__":
        if sys.argv[1] == "launch":
            kids = [subprocess.Popen([sys.executable, __file__, "rank"], env={**os.environ, "RANK": str(r)})
                    for r in range(2)]
            for kid in kids:
                kid.wait()
        else:
            train(int(os.environ["RANK"]))
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_rank_0_waits_in_all_reduce_and_rank_1_that_never_arrived_is_the_odd_one_out(
        spawn, tmp_path, host, make_ctx):
    require(importlib.util.find_spec("torch") is not None, "torch is not installed (see /tmp/torch.log)")
    script = tmp_path / "train.py"
    script.write_text(GLOO_JOB)
    parent = spawn(sys.executable, str(script), "launch", env={"PORT": str(_free_port())}).pid
    ranks = wait_for_ranks(parent, 2, timeout=60)
    wait_until_in(ranks[0].pid, "all_reduce", timeout=120)
    wait_until_in(ranks[1].pid, "load_next_batch", timeout=120)

    result = host.run_command("pid", make_ctx(is_admin=True), [str(parent)])

    assert [g.ranks for g in result.stack_groups] == [["1"], ["0"]]
    by_rank = {g.ranks[0]: g for g in result.stack_groups}
    assert by_rank["0"].where.function == "all_reduce"
    assert "torch/distributed/" in by_rank["0"].where.filename
    assert by_rank["1"].where.function == "load_next_batch" and by_rank["1"].where.filename == str(script)
    assert by_rank["1"].odd_one_out and not by_rank["0"].odd_one_out
    assert result.summary.startswith("rank 1: load_next_batch (train.py:")
    assert "— rank 0: all_reduce (distributed_c10d.py" in result.summary
