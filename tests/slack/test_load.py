"""Load correctness (timing lives in bench/bench_slack_load.py): 200 pasted errors, each delivered twice
concurrently (a retry, a second connection), get exactly one reply each and all land in the store."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.slack import payloads
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE

MESSAGES = 200
CHANNELS = 20


def test_200_messages_delivered_twice_get_exactly_one_reply_each_and_are_all_stored(slack):
    messages = [
        payloads.message(
            f"[rank{i % 8}]: {(OOM_LINE, NCCL_LINE)[i % 2]}", channel=f"C0LOAD{i % CHANNELS:02d}"
        )
        for i in range(MESSAGES)
    ]
    # Both deliveries of a message are adjacent, so they are in flight at the same time.
    deliveries = [(m, f"Ev0LOAD{i:04d}") for i, m in enumerate(messages) for _ in range(2)]
    with ThreadPoolExecutor(max_workers=16) as senders:
        statuses = list(senders.map(lambda d: slack.event(d[0], event_id=d[1]).status, deliveries))
    assert statuses == [200] * (2 * MESSAGES)
    slack.fake.wait_for(lambda: len(slack.fake.posts()) >= MESSAGES, timeout=60)
    slack.idle(60)
    replies = slack.fake.posts()
    assert len(replies) == MESSAGES
    assert sorted((r["channel"], r["thread_ts"]) for r in replies) == sorted(
        (m["channel"], m["ts"]) for m in messages
    )
    stored = slack.tracebot.store.recent_diagnoses(limit=10 * MESSAGES)
    assert sorted(d.message_ts for d in stored) == sorted(m["ts"] for m in messages)
    assert all(d.reply_ts for d in stored)
