"""A worker script whose "ranks" block in named functions, and waits that poll with real py-spy."""

from __future__ import annotations

import textwrap
import time

from tracebot.plugins.pyspy import procs
from tracebot.plugins.pyspy.dump import ProcessDump, dump_pid

WORKER = textwrap.dedent("""\
    import os
    import subprocess
    import sys
    import threading


    def load_next_batch():
        threading.Event().wait()  # LOAD_LINE: waits for data that never comes


    def all_reduce_wait():
        os.read(0, 1)  # WAIT_LINE: blocks until the test closes stdin


    def launch(world, odd):
        kids = [subprocess.Popen([sys.executable, __file__, "odd" if r == odd else "wait"],
                                 env={**os.environ, "RANK": str(r), "WORLD_SIZE": str(world)},
                                 stdin=subprocess.PIPE)
                for r in range(world)]
        for kid in kids:
            kid.wait()


    if __name__ == "__main__":
        role = sys.argv[1]
        if role == "odd":
            load_next_batch()
        elif role == "wait":
            all_reduce_wait()
        else:
            launch(int(sys.argv[2]), int(sys.argv[3]))
""")


def line_of(marker: str, source: str = WORKER) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if marker in line)


def wait_until_in(pid: int, function: str, timeout: float = 30.0) -> None:
    """Poll with py-spy until the process is blocked inside ``function`` (no sleeps-and-hope)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        last = dump_pid(pid)
        if isinstance(last, ProcessDump) and any(f.function == function for f in last.frames):
            return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never reached {function}: {last}")


def wait_for_ranks(launcher: int, world: int, timeout: float = 30.0) -> list[procs.Target]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = procs.targets(launcher)
        if len(found) == world and all(t.label.isdigit() for t in found):
            return found
        time.sleep(0.05)
    raise AssertionError(f"launcher {launcher} did not start {world} ranks")


