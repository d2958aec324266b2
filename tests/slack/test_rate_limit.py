"""About one message per second per channel: a burst of answers in one channel is spaced out, and the
spacing happens in the channel's queue, not on a worker sleeping for its slot.

The app's limiter runs on a clock the test moves by hand, so the test reads the schedule the limiter
grants (and whether anyone had to sleep for a slot) instead of sleeping through it and timing the gaps.
"""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.harness import make_config, running_app
from tests.slack.tiny_kb import OOM_LINE
from tracebot.service.ratelimit import RateLimiter

T0 = 1000.0


class HandClockLimiter(RateLimiter):
    """The real limiter on a clock the test moves: it records when each send is granted and every
    sleep a sender would have needed (it never really sleeps)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.now = T0
        self.slept: list[float] = []
        self.granted: list[tuple[str, float]] = []
        super().__init__(rate=rate, burst=burst, clock=lambda: self.now, sleep=self.slept.append)

    def acquire(self, key: str) -> float:
        wait = super().acquire(key)
        self.granted.append((key, self.now + wait))
        return wait

    def schedule(self, channel: str) -> list[float]:
        return sorted(at for key, at in self.granted if key == channel)


def test_a_busy_channel_gets_three_answers_at_once_then_one_a_second_and_a_quiet_channel_never_waits(
    tmp_path, fake_slack, kb_dir, plugin_host, monkeypatch
):
    # Slack's own limit is the default: no override of the rate or the burst.
    monkeypatch.delenv("TRACEBOT_CHANNEL_RATE", raising=False)
    monkeypatch.delenv("TRACEBOT_CHANNEL_BURST", raising=False)
    limiters: list[HandClockLimiter] = []

    def hand_clock_limiter(rate: float, burst: int) -> HandClockLimiter:
        limiters.append(HandClockLimiter(rate, burst))
        return limiters[-1]

    monkeypatch.setattr("tracebot.slack.app.RateLimiter", hand_clock_limiter)
    with running_app(make_config(tmp_path, fake_slack, kb_dir), fake_slack, host=plugin_host[0]) as slack:
        [limiter] = limiters
        try:
            for _ in range(5):
                slack.event(payloads.message(OOM_LINE, channel="C0BUSY"))
            slack.event(payloads.message(OOM_LINE, channel="C0QUIET"))
            fake_slack.wait_for(lambda: len(fake_slack.posts("C0BUSY")) == 3 and fake_slack.posts("C0QUIET"))
            # Bolt acks an event before its listener has queued it: wait until all five are in.
            fake_slack.wait_for(lambda: slack.tracebot.jobs.waiting("C0BUSY") == 2)  # the 4th and 5th queue
            assert len(fake_slack.posts("C0BUSY")) == 3
            for answered in (4, 5):
                limiter.now += 1.0
                fake_slack.wait_for(lambda n=answered: len(fake_slack.posts("C0BUSY")) == n)
            slack.idle()
        finally:
            limiter.now += 3600  # whatever happened, let queued answers go so the app can shut down
    assert limiter.schedule("C0BUSY") == [T0, T0, T0, T0 + 1, T0 + 2]
    assert limiter.schedule("C0QUIET") == [T0], "another channel does not wait behind the busy one"
    assert limiter.slept == [], "no worker slept on a rate slot: the queue waited instead"
