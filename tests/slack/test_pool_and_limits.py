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
