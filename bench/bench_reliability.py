"""Reliability under load: does a flooded channel make other channels wait? Prints JSON.

100 pastes flood one channel, then 500 pastes arrive spread over 10 other channels. For every channel:
the wait from its first paste to its first answer (target: within one per-channel pace interval, i.e.
nobody waits on another channel), and when its last answer came (its own pace: n / rate). Over all:
pastes lost (no answer) and duplicated (more than one).

tracebot as built (answers queued per channel; a worker never sleeps on a rate slot) against the old
behaviour in the same run: one FIFO queue whose workers sleep in the per-channel rate limiter, so the
flood's waits hold every worker and the other channels queue behind it.

Real Bolt app over real signed HTTP on 127.0.0.1, the fake Slack Web API, the bundled knowledge base,
4 answer workers. The per-channel rate is Slack's burst of 3 and then ``--rate`` messages a second
(default 10, ten times Slack's 1/s, so the run takes seconds; ``--rate 1`` is Slack's own pace).

    .venv/bin/python bench/bench_reliability.py [--rate 10] [--flood 100] [--pastes 500] [--channels 10]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.fake_slack import FakeSlack  # noqa: E402
from tests.slack import payloads  # noqa: E402
from tests.slack.harness import make_config, running_app  # noqa: E402
from tracebot.service.jobs import Job, JobPool  # noqa: E402
from tracebot.service.plugin_host import PluginHost  # noqa: E402

OOM = "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU {r} has a total capacity of 79.15 GiB"
WORKERS = 4


class OneQueue(JobPool):
    """The old pool: one FIFO queue, no lanes, no pacing; a worker sleeps in the rate limiter."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers=workers, max_pending=10_000, pace=lambda _lane: 0.0)

    def submit(self, fn: Any, *, label: str, key: str | None = None, lane: str | None = None,
               meta: dict[str, Any] | None = None, urgent: bool = False) -> tuple[Job, bool]:
        return super().submit(fn, label=label, key=key, meta=meta, urgent=urgent)


def run(pool: JobPool, rate: float, flood: int, pastes: int, channels: int) -> dict[str, Any]:
    fake = FakeSlack().start()
    os.environ["TRACEBOT_CHANNEL_RATE"] = str(rate)
    os.environ["TRACEBOT_CHANNEL_BURST"] = "3"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = make_config(Path(tmp), fake, REPO / "knowledge")
            config.channel_rate, config.channel_burst = rate, 3
            host = PluginHost(builtins=(), entry_points=False)
            with running_app(config, fake, host=host, jobs=pool) as slack:
                messages = [payloads.message(OOM.format(r=i % 8), channel="C0FLOOD") for i in range(flood)]
                messages += [
                    payloads.message(OOM.format(r=i % 8), channel=f"C0CH{i % channels:02d}") for i in range(pastes)
                ]
                sent: dict[str, float] = {}

                def deliver(m: dict[str, Any]) -> int:
                    sent[m["ts"]] = time.monotonic()
                    return slack.event(m).status

                started = time.monotonic()
                with ThreadPoolExecutor(max_workers=8) as senders:
                    statuses = list(senders.map(deliver, messages))
                assert statuses == [200] * len(messages), statuses
                slack.idle(timeout=600)
                elapsed = time.monotonic() - started
                answers: dict[str, list[float]] = defaultdict(list)
                for call in fake.calls_to("chat.postMessage"):
                    answers[call.params.get("thread_ts") or ""].append(call.at)
    finally:
        fake.stop()
    by_channel: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in messages:
        by_channel[m["channel"]].append(m)
    interval = 1.0 / rate
    first_wait, last_at = {}, {}
    for channel, ms in by_channel.items():
        done = [min(answers[m["ts"]]) for m in ms if answers[m["ts"]]]
        # The channel's first answer (to whichever paste reached tracebot first) after its first paste.
        first_wait[channel] = min(done) - min(sent[m["ts"]] for m in ms) if done else None
        last_at[channel] = max(done) - started if done else None
    quiet = [c for c in by_channel if c != "C0FLOOD"]
    quiet_first = [first_wait[c] for c in quiet if first_wait[c] is not None]
    return {
        "seconds": round(elapsed, 2),
        "lost": sum(1 for m in messages if not answers[m["ts"]]),
        "duplicated": sum(1 for m in messages if len(answers[m["ts"]]) > 1),
        "first_answer_s": {
            "flooded_channel": round(first_wait["C0FLOOD"] or -1, 3),
            "other_channels_max": round(max(quiet_first), 3),
            "other_channels_median": round(statistics.median(quiet_first), 3),
        },
        "other_channels_first_answer_within_pace": sum(1 for w in quiet_first if w <= interval),
        "last_answer_s": {
            "flooded_channel": round(last_at["C0FLOOD"] or -1, 2),
            "other_channels_max": round(max(v for c, v in last_at.items() if c != "C0FLOOD" and v), 2),
        },
        "own_pace_s": {
            "flooded_channel": round((flood - 3) * interval, 2),
            "other_channels": round((pastes // channels - 3) * interval, 2),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=10.0)
    ap.add_argument("--flood", type=int, default=100)
    ap.add_argument("--pastes", type=int, default=500)
    ap.add_argument("--channels", type=int, default=10)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ["TRACEBOT_LOAD_ENTRYPOINTS"] = "0"
    sizes = (args.rate, args.flood, args.pastes, args.channels)
    lanes = run(JobPool(workers=WORKERS, max_pending=10_000, max_per_lane=1_000), *sizes)
    baseline = run(OneQueue(WORKERS), *sizes)
    print(json.dumps({
        "setup": {"rate_per_channel_per_s": args.rate, "burst": 3, "pace_interval_s": 1 / args.rate,
                  "flood": args.flood, "pastes": args.pastes, "channels": args.channels, "workers": WORKERS},
        "per_channel_queues": lanes,
        "baseline_one_queue_blocking_workers": baseline,
    }, indent=2))


if __name__ == "__main__":
    main()
