"""About one message per second per channel: a burst of answers in one channel is spaced out.

The app's limiter runs on a clock the test holds still, so the test reads the schedule the limiter
grants instead of sleeping through it and measuring the gaps.
"""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.harness import make_config, running_app
from tests.slack.tiny_kb import OOM_LINE
from tracebot.service.ratelimit import RateLimiter

T0 = 1000.0


class StoppedClockLimiter(RateLimiter):
    """The real limiter with time stopped at T0: it records when each send is granted (T0 + its wait)
    and the wait it asks for, and does not sleep."""

    def __init__(self, rate: float, burst: int) -> None:
        self.waits: list[float] = []
        self.granted: list[tuple[str, float]] = []
        super().__init__(rate=rate, burst=burst, clock=lambda: T0, sleep=self.waits.append)

    def acquire(self, key: str) -> float:
        wait = super().acquire(key)
        self.granted.append((key, T0 + wait))
        return wait

    def schedule(self, channel: str) -> list[float]:
        return sorted(at for key, at in self.granted if key == channel)


def test_a_busy_channel_gets_three_answers_at_once_then_one_a_second_and_a_quiet_channel_never_waits(
    tmp_path, fake_slack, kb_dir, plugin_host, monkeypatch
):
    # Slack's own limit is the default: no override of the rate or the burst.
    monkeypatch.delenv("TRACEBOT_CHANNEL_RATE", raising=False)
    monkeypatch.delenv("TRACEBOT_CHANNEL_BURST", raising=False)
    limiters: list[StoppedClockLimiter] = []

    def stopped_clock_limiter(rate: float, burst: int) -> StoppedClockLimiter:
        limiters.append(StoppedClockLimiter(rate, burst))
        return limiters[-1]

    monkeypatch.setattr("tracebot.slack.app.RateLimiter", stopped_clock_limiter)
    with running_app(make_config(tmp_path, fake_slack, kb_dir), fake_slack, host=plugin_host[0]) as slack:
        for _ in range(5):
            slack.event(payloads.message(OOM_LINE, channel="C0BUSY"))
        slack.event(payloads.message(OOM_LINE, channel="C0QUIET"))
        slack.idle()
    [limiter] = limiters
    assert len(fake_slack.posts("C0BUSY")) == 5 and len(fake_slack.posts("C0QUIET")) == 1
    assert limiter.schedule("C0BUSY") == [T0, T0, T0, T0 + 1, T0 + 2]
    assert sorted(limiter.waits) == [1.0, 2.0], "only the fourth and fifth answers wait"
    assert limiter.schedule("C0QUIET") == [T0], "another channel does not wait behind the busy one"
