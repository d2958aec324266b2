"""Run ``py-spy dump --json`` on processes and turn its output into :class:`Frame` stacks.

Each pid yields either a :class:`ProcessDump` or a short reason it could not be read (permission,
exited, not Python, timeout): one unreadable rank never spoils the others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tracebot.plugin_api import Frame

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_WORKERS = 16
# What one process's dump may print: py-spy writes every frame of every thread, and the program chooses how
# deep its stacks go (a recursion a million frames deep is ~100 MB of JSON, times 16 dumps at once).
MAX_DUMP_OUTPUT = 16 << 20
MAX_STDERR = 1 << 20
MAX_FRAMES = 2000  # innermost first: a hang shows at the top of the stack


@dataclass
class ProcessDump:
    pid: int
    frames: list[Frame]  # the chosen thread's stack, innermost first
    thread_name: str
    threads: int  # how many Python threads py-spy saw


def find_pyspy(configured: str | Sequence[str] | None = None) -> list[str]:
    """The py-spy argv prefix: configured (path or argv, e.g. ``["sudo", "-n", "py-spy"]``), else the
    py-spy installed next to this interpreter, else the one on PATH."""
    if configured:
        return [configured] if isinstance(configured, str) else [str(a) for a in configured]
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("py-spy")
    return [found or "py-spy"]


def dump_argv(pid: int, native: bool = False, pyspy: Sequence[str] | None = None) -> list[str]:
    argv = [*(pyspy or find_pyspy()), "dump", "--json", "--pid", str(int(pid))]
    if native:
        argv.append("--native")
    return argv


def dump_pid(pid: int, native: bool = False, timeout: float = DEFAULT_TIMEOUT_S,
             pyspy: Sequence[str] | None = None, remote: Sequence[str] | None = None) -> ProcessDump | str:
    """Dump one process. ``remote`` is an argv prefix (``ssh -o BatchMode=yes host``) to run it elsewhere."""
    argv = [*(remote or []), *dump_argv(pid, native, pyspy)]
    env = {**os.environ, "RUST_BACKTRACE": "0"}  # keep py-spy's errors to their first line
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except FileNotFoundError:
        if remote:
            return f"{argv[0]} not found: ssh is needed to trace on another host"
        return f"py-spy not found ({argv[0]}); install it or set pyspy.path in the config"
    except OSError as exc:
        return f"could not run py-spy: {exc.strerror or exc}"
    out, err = CappedPipe(proc.stdout, MAX_DUMP_OUTPUT), CappedPipe(proc.stderr, MAX_STDERR)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"py-spy timed out after {timeout:.0f}s (the process may be stopped or in uninterruptible IO)"
    finally:
        out.join(), err.join()
    if remote and proc.returncode == 255:  # ssh's own failure code: py-spy never ran
        return f"ssh failed: {_first_line(err.text()) or 'no error message'}"
    if proc.returncode != 0:
        return classify_failure(err.text(), native=native)
    if out.over:
        return (f"py-spy's dump was larger than {MAX_DUMP_OUTPUT >> 20} MB (stacks that deep or that many threads); "
                "it was not read")
    try:
        return parse_dump_json(out.text(), pid)
    except ValueError as exc:
        return f"unreadable py-spy output: {exc}"


class CappedPipe:
    """What a child's pipe gives, up to ``cap`` bytes, read on a thread of its own; past the cap the rest is
    read and dropped (the writer never blocks on a full pipe) and ``over`` says so. For output whose size the
    traced program or job decides: memory must not be theirs to fill."""

    def __init__(self, pipe: IO[bytes] | None, cap: int) -> None:
        self.pipe, self.cap, self.over = pipe, cap, False
        self.parts: list[bytes] = []
        self.thread = threading.Thread(target=self._read, name="capped-pipe", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        pipe = self.pipe
        if pipe is None:
            return
        kept = 0
        with pipe:
            for chunk in iter(lambda: pipe.read(1 << 16), b""):
                if kept + len(chunk) > self.cap:
                    self.over = True
                    continue
                self.parts.append(chunk)
                kept += len(chunk)

    def join(self) -> None:
        self.thread.join(timeout=5)

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", errors="replace")


def dump_many(pids: Sequence[int], parallel: bool = True, max_workers: int = DEFAULT_MAX_WORKERS,
              native: bool = False, timeout: float = DEFAULT_TIMEOUT_S, pyspy: Sequence[str] | None = None,
              remote: Sequence[str] | None = None) -> dict[int, ProcessDump | str]:
    """Dump every pid, in parallel by default (each py-spy is a separate process waiting on ptrace)."""
    prefix = list(pyspy or find_pyspy())

    def one(pid: int) -> ProcessDump | str:
        return dump_pid(pid, native=native, timeout=timeout, pyspy=prefix, remote=remote)

    if not parallel or len(pids) <= 1:
        return {pid: one(pid) for pid in pids}
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(pids)))) as pool:
        return dict(zip(pids, pool.map(one, pids), strict=True))


def classify_failure(stderr: str, native: bool = False) -> str:
    """A short human reason from py-spy's stderr."""
    text = stderr.strip()
    low = text.lower()
    if "permission denied" in low or "operation not permitted" in low:
        # py-spy's own words, so the knowledge entry about ptrace / SYS_PTRACE recognises them
        return ("permission denied (py-spy: Permission Denied: Try running again with elevated permissions); "
                "py-spy needs ptrace rights: run as the process owner or root, or give the container SYS_PTRACE")
    if "failed to get process executable name" in low or "no such process" in low:
        return "no such process (it exited)"
    if "failed to find python version" in low or "failed to find a python interpreter" in low:
        if native:  # seen with --native on Pythons whose version py-spy reads only from the exe path
            return "py-spy --native could not identify the Python in this process; try without --native"
        return "not a Python process (py-spy found no interpreter)"
    return f"py-spy failed: {_first_line(text) or 'no error message'}"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("Error: ")[:200]
    return ""


def parse_dump_json(text: str, pid: int | None = None) -> ProcessDump:
    """Parse ``py-spy dump --json`` output (a list of threads) and keep the thread that says most.

    The main thread is the one whose OS thread id is the pid (or is named MainThread); a training
    loop's main thread is where a hang shows. Raises ValueError on anything that is not that shape.
    """
    try:
        threads = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from exc
    except RecursionError as exc:  # nested deeper than the parser goes: no dump py-spy writes
        raise ValueError("not a py-spy dump (nested too deep)") from exc
    if not isinstance(threads, list) or not all(isinstance(t, dict) for t in threads):
        raise ValueError("expected a list of threads")
    if not threads:
        raise ValueError("py-spy saw no Python threads")
    chosen = _choose_thread(threads, pid)
    listed = chosen.get("frames") if isinstance(chosen.get("frames"), list) else []
    frames = [_frame(f) for f in listed[:MAX_FRAMES] if isinstance(f, dict)]
    dumped_pid = chosen.get("pid") if isinstance(chosen.get("pid"), int) else pid
    return ProcessDump(pid=int(dumped_pid or 0), frames=frames,
                       thread_name=str(chosen.get("thread_name") or ""), threads=len(threads))


def _choose_thread(threads: list[dict[str, Any]], pid: int | None) -> dict[str, Any]:
    def rank(t: dict[str, Any]) -> tuple[bool, bool, bool, bool]:
        return (pid is not None and t.get("os_thread_id") == pid, t.get("thread_name") == "MainThread",
                bool(t.get("owns_gil")), bool(t.get("active")))

    return max(threads, key=rank)  # max keeps the first of equals: py-spy lists the main thread first


def _frame(raw: dict[str, Any]) -> Frame:
    line = raw.get("line")
    return Frame(function=str(raw.get("name") or "?"), filename=str(raw.get("filename") or ""),
                 line=line if isinstance(line, int) and line > 0 else None)
