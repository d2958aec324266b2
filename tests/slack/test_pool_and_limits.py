"""The job pool, the per-channel rate limiter and the knowledge holder: the plumbing under the listeners."""

from __future__ import annotations

import threading

import pytest

from tracebot.service.jobs import JobPool, PoolBusy
from tracebot.service.ratelimit import RateLimiter


def test_a_second_request_for_running_work_gets_the_running_job():
    pool = JobPool(workers=2)
    release = threading.Event()
    calls = []

    def work(job):
        calls.append(job.id)
        release.wait(5)
        return "done"

    first, created_first = pool.submit(work, label="job 123", key="job:123")
    second, created_second = pool.submit(work, label="job 123", key="job:123")
    release.set()
    assert first.future.result(5) == "done"
    assert (created_first, created_second) == (True, False)
    assert second is first and calls == [first.id]
    # The result is set a moment before the worker lets go of the key: wait for that state, not a time.
    assert pool.wait_idle(5)
    third, created_third = pool.submit(work, label="job 123", key="job:123")
    assert created_third and third.future.result(5) == "done", "after it finished, the same key runs again"
    pool.shutdown()


def test_the_pool_refuses_work_beyond_its_bound_instead_of_queueing_forever():
    pool = JobPool(workers=1, max_pending=2)
    release = threading.Event()
    pool.submit(lambda job: release.wait(5), label="a")
    pool.submit(lambda job: release.wait(5), label="b")
    with pytest.raises(PoolBusy, match="busy"):
        pool.submit(lambda job: None, label="c")
    release.set()
    assert pool.wait_idle(5)
    pool.shutdown()


def test_progress_reaches_listeners_and_a_failing_listener_does_not_fail_the_job():
    pool = JobPool(workers=1)
    seen: list[str] = []
    started = threading.Event()
    go = threading.Event()

    def work(job):
        started.set()
        go.wait(5)
        job.progress("dumping rank 3/8")
        return 42

    job, _ = pool.submit(work, label="p")
    started.wait(5)
    job.on_progress(lambda msg: (_ for _ in ()).throw(RuntimeError("display broke")))
    job.on_progress(seen.append)
    go.set()
    assert job.future.result(5) == 42
    assert seen == ["dumping rank 3/8"] and job.last_progress == "dumping rank 3/8"
    pool.shutdown()


def test_a_channel_gets_a_short_burst_then_one_message_per_second_and_other_channels_do_not_wait():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(rate=1.0, burst=3, clock=lambda: now[0], sleep=sleep)
    waits = [limiter.acquire("C1") for _ in range(5)]
    assert waits[:3] == [0, 0, 0]
    assert waits[3] == pytest.approx(1.0) and waits[4] == pytest.approx(1.0)
    assert limiter.acquire("C2") == 0
    now[0] += 10
    assert limiter.acquire("C1") == 0, "an idle channel has its burst back"


def test_the_rate_limiter_gives_real_threads_on_one_channel_one_slot_each():
    # Time stands still; each thread is granted a distinct slot 1/20 s after the previous one.
    waits: list[float] = []
    limiter = RateLimiter(rate=20.0, burst=1, clock=lambda: 500.0, sleep=lambda _s: None)

    def send():
        waits.append(limiter.acquire("C1"))

    threads = [threading.Thread(target=send) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(waits) == pytest.approx([0.0, 0.05, 0.1, 0.15, 0.2])


def test_one_lane_runs_its_jobs_one_at_a_time_in_order_while_other_lanes_run_beside_it():
    pool = JobPool(workers=3)
    release = threading.Event()
    order: list[str] = []
    in_busy_lane = []

    def busy(job):
        in_busy_lane.append(job.label)
        assert len(in_busy_lane) == 1, "two jobs of one lane ran at once"
        release.wait(5)
        order.append(job.label)
        in_busy_lane.remove(job.label)

    for i in range(4):
        pool.submit(busy, label=f"busy {i}", lane="C0BUSY")
    quiet, _ = pool.submit(lambda job: "answered", label="quiet", lane="C0QUIET")
    assert quiet.future.result(5) == "answered", "another lane runs while the busy one holds its worker"
    release.set()
    assert pool.wait_idle(5)
    assert order == ["busy 0", "busy 1", "busy 2", "busy 3"]
    pool.shutdown()


def test_a_lane_waiting_for_its_rate_slot_does_not_hold_a_worker():
    ready_at = {"C0BUSY": float("inf")}  # the busy channel's next slot never comes during the test
    pool = JobPool(workers=1, pace=lambda lane: ready_at.get(lane, 0.0))
    ran: list[str] = []
    pool.submit(lambda job: ran.append(job.label), label="busy", lane="C0BUSY")
    quiet, _ = pool.submit(lambda job: ran.append(job.label), label="quiet", lane="C0QUIET")
    quiet.future.result(5)
    assert ran == ["quiet"] and pool.waiting("C0BUSY") == 1
    ready_at["C0BUSY"] = 0.0
    assert pool.wait_idle(5) and ran == ["quiet", "busy"]
    pool.shutdown()


def test_a_full_lane_refuses_its_own_work_but_not_another_lanes_and_a_notice_jumps_its_queue():
    pool = JobPool(workers=1, max_per_lane=2)
    release = threading.Event()
    ran: list[str] = []

    def work(job):
        # held until released, however long the submissions take: a 5 s bound let a1 finish on a loaded
        # machine, the worker took the queued notice, and the second notice was (rightly) accepted
        release.wait()
        ran.append(job.label)

    try:
        pool.submit(work, label="a1", lane="A")
        pool.submit(work, label="a2", lane="A")
        with pytest.raises(PoolBusy, match="in this channel"):
            pool.submit(work, label="a3", lane="A")
        pool.submit(work, label="b1", lane="B")
        pool.submit(work, label="notice", lane="A", urgent=True)
        with pytest.raises(PoolBusy):
            pool.submit(work, label="second notice", lane="A", urgent=True)
    finally:
        release.set()
    assert pool.wait_idle(5)
    assert ran.index("notice") < ran.index("a2"), "the notice goes before the work already waiting"
    assert sorted(ran) == ["a1", "a2", "b1", "notice"]
    pool.shutdown()
