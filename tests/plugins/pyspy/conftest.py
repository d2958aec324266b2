"""Real hung Python processes for real py-spy: a worker script whose ranks block in named functions."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.plugins.pyspy.hung import WORKER, wait_for_ranks, wait_until_in
from tests.support import require
from tracebot.plugins.pyspy import procs
from tracebot.plugins.pyspy.dump import find_pyspy


@pytest.fixture(scope="session")
def pyspy_argv() -> list[str]:
    argv = find_pyspy()
    require(Path(argv[0]).exists(), f"py-spy is not installed ({argv[0]})")
    return argv


@pytest.fixture
def worker_script(tmp_path: Path) -> Path:
    path = tmp_path / "worker.py"
    path.write_text(WORKER)
    return path


@pytest.fixture
def spawn(pyspy_argv: list[str]) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start processes in their own session; every one (and its children) is killed afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, **(env or {})})
        started.append(proc)
        return proc

    try:
        yield start
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture
def hung(spawn, worker_script: Path) -> Callable[[str], int]:
    """``hung("odd")`` / ``hung("wait")``: a Python process blocked in load_next_batch / all_reduce_wait."""
    def start(role: str, env: dict[str, str] | None = None) -> int:
        proc = spawn(sys.executable, str(worker_script), role, env=env)
        wait_until_in(proc.pid, "load_next_batch" if role == "odd" else "all_reduce_wait")
        return proc.pid

    return start


@pytest.fixture
def launcher(spawn, worker_script: Path) -> Callable[[int, int], tuple[int, list[procs.Target]]]:
    """A torchrun-like parent starting ``world`` ranks (RANK env); rank ``odd`` waits for data."""
    def start(world: int, odd: int) -> tuple[int, list[procs.Target]]:
        proc = spawn(sys.executable, str(worker_script), "launch", str(world), str(odd))
        ranks = wait_for_ranks(proc.pid, world)
        for target in ranks:
            wait_until_in(target.pid, "load_next_batch" if target.label == str(odd) else "all_reduce_wait")
        return proc.pid, ranks

    return start
