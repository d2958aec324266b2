"""The inbox against real SQLite files and real processes: accepted work survives a killed process, is
taken over by one restart only, and its text is gone once answered."""

from __future__ import annotations

import subprocess
import sys
import threading

from tracebot.store import Store, Work
from tracebot.store import owner as owners

PASTE = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (secret project alpha)"


def _dead_owner() -> str:
    """The token of a process that has exited (and been collected), as a kill -9 leaves it."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    token = owners.token(proc.pid)
    assert owners.alive(token)
    proc.kill()
    proc.wait(timeout=10)
    return token


def _orphaned(owner: str, _created_at: float) -> bool:
    return not owners.alive(owner)


def test_a_claimed_delivery_and_its_work_are_written_together_and_a_duplicate_writes_neither(tmp_path):
    store = Store(tmp_path / "t.sqlite3")
    work = Work("auto", {"msg": {"text": PASTE}}, owners.token())
    first = store.claim_work(["auto:ev:Ev1", "auto:msg:C1:1.0"], work)
    assert isinstance(first, int) and first is not True
    assert store.claim_work(["auto:ev:Ev2", "auto:msg:C1:1.0"], work) is False
    assert store.count("inbox") == 1


def test_answered_work_leaves_no_trace_of_what_was_pasted(tmp_path):
    path = tmp_path / "t.sqlite3"
    store = Store(path)
    work_id = store.claim_work(["auto:ev:Ev1"], Work("auto", {"msg": {"text": PASTE}}, owners.token()))
    assert isinstance(work_id, int)
    store.finish_work(work_id)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.db.execute("VACUUM")
    assert store.count("inbox") == 0
    assert b"secret project alpha" not in path.read_bytes()
    assert not store.claim_event("auto:ev:Ev1"), "the delivery stays claimed: a redelivery is not answered again"


def test_work_of_a_killed_process_is_taken_over_and_a_running_ones_is_not(tmp_path):
    store = Store(tmp_path / "t.sqlite3")
    dead, me = _dead_owner(), owners.token()
    store.add_work(Work("auto", {"n": 1}, dead))
    store.add_work(Work("auto", {"n": 2}, me))  # this process is running: its work is its own
    runner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        store.add_work(Work("auto", {"n": 3}, owners.token(runner.pid)))
        taken = store.adopt_work("restart-1", _orphaned)
        assert [w.payload["n"] for w in taken] == [1]
        assert store.adopt_work("restart-2", _orphaned) == [], "restart-1 is alive: a second start takes nothing"
    finally:
        runner.kill()
        runner.wait(timeout=10)


def test_two_processes_starting_at_once_take_each_row_once(tmp_path):
    path = tmp_path / "t.sqlite3"
    Store(path)
    a_owner, b_owner = _dead_owner(), _dead_owner()
    seed = Store(path)
    for n in range(40):
        seed.add_work(Work("auto", {"n": n}, a_owner if n % 2 else b_owner))
    taken: dict[str, list[int]] = {}
    go = threading.Barrier(2)

    def start(name: str) -> None:
        store = Store(path)
        go.wait()
        # each sees the other's token as alive: only rows of owners that are gone are taken
        taken[name] = [w.payload["n"] for w in store.adopt_work(name, lambda o, _at: o in (a_owner, b_owner))]

    threads = [threading.Thread(target=start, args=(name,)) for name in ("p1", "p2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(taken["p1"] + taken["p2"]) == list(range(40))


def test_a_token_from_another_host_counts_as_alive_and_a_reused_pid_as_dead(tmp_path):
    assert owners.alive("other-host|boot|1|123")
    host, boot, pid, _started = owners.token().split("|")
    assert not owners.alive(f"{host}|{boot}|{pid}|1"), "this pid, started at another time: another process"
    assert not owners.alive(f"{host}|another-boot|{pid}|{_started}"), "the host rebooted since"


def test_rows_of_a_process_whose_start_time_cannot_be_read_age_out_even_when_it_restarts_with_its_pid(
        tmp_path, monkeypatch):
    """Without /proc (no boot id, no start time) a token was "host||pid|": a process restarted with the same
    pid (PID 1 in a container) wrote the same token, so ``owner != ?`` hid its predecessor's rows from it, and
    any pid in use counted as alive: the rows were never answered nor dropped. Now such a token is unique to
    its process and, as it cannot be checked, is judged by its age as another host's is."""
    from tracebot.service.inbox import Inbox
    from tracebot.service.records import Records

    monkeypatch.setattr(owners, "_boot", lambda: "")
    monkeypatch.setattr(owners, "proc_stat", lambda pid: None)
    owners._unknown_start.cache_clear()
    before = owners.token()
    owners._unknown_start.cache_clear()  # the same pid, after a restart
    after = owners.token()
    assert before != after and before.split("|")[2] == after.split("|")[2]
    assert not owners.checkable(before) and owners.alive(before), "it cannot be told gone: never guessed dead"
    store = Store(tmp_path / "t.sqlite3")
    work_id = store.add_work(Work("auto", {"n": 1}, before))
    inbox = Inbox(store, Records(), owner=after)
    assert inbox.adopt(max_age_s=3600) == [], "it may still be running: too young to take"
    store.db.execute("UPDATE inbox SET created_at = created_at - 7200 WHERE id = ?", [work_id])
    assert [w.payload["n"] for w in inbox.adopt(max_age_s=3600)] == [1]
    owners._unknown_start.cache_clear()
