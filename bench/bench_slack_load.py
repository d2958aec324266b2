"""Slack-layer load benchmark: prints JSON.

1. 20 concurrent slow ``/trace`` commands (each runs 2 s): how fast is each one acknowledged? Slack
   gives an app 3 s. tracebot acks at once and runs the work on its own pool; the naive baseline acks
   and then does the work inside its Bolt listener (Bolt's pool has 5 threads), so later requests wait.
2. 200 pasted errors, each delivered twice at the same time (a retry, a second connection): time until
   every reply is posted, replies, diagnoses stored. The naive baseline answers every delivery.

Real Bolt app over real HTTP on 127.0.0.1, requests signed as Slack signs them, the Web API answered by
the fake Slack (``tests/fakes/fake_slack.py``). The bundled knowledge base; production channel rate
limits (1 message/s per channel, burst 3) unless TRACEBOT_CHANNEL_RATE says otherwise.

    .venv/bin/python bench/bench_slack_load.py [--commands 20] [--seconds 2] [--messages 200]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from slack_bolt import Ack, App  # noqa: E402

from tests.fakes.fake_slack import FakeSlack  # noqa: E402
from tests.slack import payloads  # noqa: E402
from tests.slack.harness import SIGNING_SECRET, make_config, running_app, send_signed  # noqa: E402
from tests.slack.plugins_for_tests import SlowPlugin  # noqa: E402
from tracebot.knowledge.loader import load_knowledge_base  # noqa: E402
from tracebot.matcher import Matcher  # noqa: E402
from tracebot.service.plugin_host import PluginHost  # noqa: E402
from tracebot.slack.app import make_client  # noqa: E402
from tracebot.slack.http import make_http_server  # noqa: E402

OOM = "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU {r} has a total capacity of 79.15 GiB"
WATCHDOG = (
    "[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 "
    "milliseconds before timing out."
)


def percentiles(samples: list[tuple[float, int]]) -> dict[str, float]:
    """Ack latency of each request; a request Bolt answered with an error (its listener never got to
    ``ack()`` within 3 s, Bolt answers 404) counts as missed, as it would in Slack."""
    ordered = sorted(t for t, _ in samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p99_ms": round(p99 * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
        "over_3s": sum(1 for t in ordered if t > 3.0),
        "not_acked": sum(1 for _, status in samples if status != 200),
    }


def timed_concurrently(url: str, bodies: list[tuple[str, str]]) -> list[tuple[float, int]]:
    """Send every body at once (one thread each); the round-trip time of each is its ack latency."""
    barrier = threading.Barrier(len(bodies))

    def one(item: tuple[str, str]) -> tuple[float, int]:
        body, ctype = item
        barrier.wait()
        start = time.monotonic()
        resp = send_signed(url, body, ctype)
        return time.monotonic() - start, resp.status

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(one, bodies))


class NaiveApp:
    """The baseline: a Bolt app that does the work inside its listeners (Bolt's 5-thread pool)."""

    def __init__(self, config: Any, kb_dir: Path, seconds: float) -> None:
        quiet = logging.getLogger("bench.naive")
        quiet.setLevel(logging.CRITICAL)  # its missed acks are counted, not printed
        self.app = App(client=make_client(config), signing_secret=SIGNING_SECRET, logger=quiet)
        matcher = Matcher(load_knowledge_base(kb_dir)[0])

        @self.app.command("/trace")
        def trace(ack: Ack, command: dict[str, Any], client: Any) -> None:
            ack()
            time.sleep(seconds)  # the command's work, holding a Bolt listener thread
            client.chat_postMessage(channel=command["channel_id"], text=f"/trace {command['text']}: done")

        @self.app.event("message")
        def message(event: dict[str, Any], client: Any) -> None:
            diagnosis = matcher.diagnose(event.get("text", ""))
            if diagnosis.confident:
                client.chat_postMessage(
                    channel=event["channel"], thread_ts=event["ts"], text=diagnosis.best.title
                )

        self.server = make_http_server(self.app, SIGNING_SECRET, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/slack/events"
        threading.Thread(
            target=self.server.serve_forever, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()


def command_bodies(n: int) -> list[tuple[str, str]]:
    return [
        (payloads.slash(f"slow {1000 + i}", channel=f"C0CMD{i:02d}"), "application/x-www-form-urlencoded")
        for i in range(n)
    ]


def message_deliveries(n: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    messages = [
        payloads.message((OOM, WATCHDOG)[i % 2].format(r=i % 8), channel=f"C0MSG{i % 20:02d}")
        for i in range(n)
    ]
    bodies = []
    for i, m in enumerate(messages):
        body = json.dumps(payloads.event_callback(m, f"Ev0BENCH{i:05d}"))
        bodies += [(body, "application/json")] * 2
    return messages, bodies


def send_all(url: str, bodies: list[tuple[str, str]]) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        for resp in pool.map(lambda b: send_signed(url, *b), bodies):
            assert resp.status == 200, resp


def wait_until(predicate: Callable[[], bool], timeout: float) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            break
        time.sleep(0.02)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    kb_dir = REPO / "knowledge"
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        host = PluginHost(builtins=(), entry_points=False)
        slow = SlowPlugin(seconds=args.seconds)
        host.register(slow, name="bench-slow")

        # 1. /trace acks under load
        fake = FakeSlack().start()
        with running_app(make_config(Path(tmp) / "a", fake, kb_dir), fake, host=host, slow=slow) as slack:
            lat = timed_concurrently(slack.url, command_bodies(args.commands))
            finished = wait_until(
                lambda: len(slow.runs) == args.commands and slack.tracebot.trace_jobs.pending == 0,
                timeout=args.commands * args.seconds + 60,
            )
        fake.stop()
        fake = FakeSlack().start()
        naive = NaiveApp(make_config(Path(tmp) / "b", fake, kb_dir), kb_dir, args.seconds)
        naive_lat = timed_concurrently(naive.url, command_bodies(args.commands))
        naive.close()
        fake.stop()
        out["trace_commands"] = {
            "concurrent": args.commands,
            "command_seconds": args.seconds,
            "tracebot_ack": percentiles(lat),
            "tracebot_all_results_posted_s": round(finished, 2),
            "naive_inline_ack": percentiles(naive_lat),
        }

        # 2. 200 messages, each delivered twice
        fake = FakeSlack().start()
        messages, bodies = message_deliveries(args.messages)
        with running_app(make_config(Path(tmp) / "c", fake, kb_dir), fake, host=host) as slack:
            start = time.monotonic()
            send_all(slack.url, bodies)
            wait_until(lambda: len(fake.posts()) >= len(messages), timeout=300)
            slack.idle(120)
            elapsed = time.monotonic() - start
            stored = len(slack.tracebot.store.recent_diagnoses(limit=10 * len(messages)))
        replies = fake.posts()
        one_each = sorted((r["channel"], r["thread_ts"]) for r in replies) == sorted(
            (m["channel"], m["ts"]) for m in messages
        )
        fake.stop()
        fake = FakeSlack().start()
        naive = NaiveApp(make_config(Path(tmp) / "d", fake, kb_dir), kb_dir, args.seconds)
        start = time.monotonic()
        send_all(naive.url, bodies)
        wait_until(lambda: len(fake.posts()) >= 2 * len(messages), timeout=120)
        naive_elapsed = time.monotonic() - start
        naive_replies = len(fake.posts())
        naive.close()
        fake.stop()
        out["pasted_messages"] = {
            "messages": len(messages),
            "deliveries": len(bodies),
            "channels": 20,
            "tracebot": {
                "seconds_to_all_replies": round(elapsed, 2),
                "replies": len(replies),
                "exactly_one_reply_per_message": one_each,
                "diagnoses_stored": stored,
            },
            "naive_no_dedupe": {"seconds": round(naive_elapsed, 2), "replies": naive_replies},
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
