"""What the durable inbox costs per message, and how long a restart takes to take over left work. Prints JSON.

Per message, the store did one write transaction (``claim_event``: the delivery's keys); with the inbox it
does the claim and the work's row in that same transaction, and one more to delete the row when the answer
is posted (``claim_work`` + ``finish_work``). Both run here against real SQLite files (WAL, as deployed), in
alternating rounds of the same run, so the ratio is not the machine's load. Then ``--left`` rows of a gone
process are taken over by ``adopt_work`` (what ``serve``/``run`` do at start).

    .venv/bin/python bench/bench_inbox.py [--messages 2000] [--rounds 5] [--left 1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracebot.store import Store, Work  # noqa: E402

PASTE = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB " * 20  # ~1.2 kB, a typical paste


def claim_only(store: Store, n: int, tag: str) -> float:
    start = time.perf_counter()
    for i in range(n):
        store.claim_event(f"auto:ev:{tag}{i}", f"auto:msg:C1:{tag}.{i}")
    return time.perf_counter() - start


def with_inbox(store: Store, n: int, tag: str) -> float:
    start = time.perf_counter()
    for i in range(n):
        work = Work("auto", {"msg": {"channel": "C1", "ts": f"{i}", "text": PASTE}}, "bench|boot|1|1")
        work_id = store.claim_work([f"auto:ev:{tag}{i}", f"auto:msg:C1:{tag}.{i}"], work)
        assert isinstance(work_id, int)
        store.finish_work(work_id)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--left", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tracebot-bench-inbox-") as tmp:
        store = Store(Path(tmp) / "t.sqlite3")
        before, after = [], []
        for r in range(args.rounds):
            before.append(claim_only(store, args.messages, f"b{r}-") / args.messages)
            after.append(with_inbox(store, args.messages, f"a{r}-") / args.messages)
        for _ in range(args.left):
            store.add_work(Work("auto", {"msg": {"text": PASTE}}, "gone|boot|1|1"))
        start = time.perf_counter()
        taken = store.adopt_work("restart|boot|2|2", lambda owner, _at: owner.startswith("gone|"))
        adopt_s = time.perf_counter() - start
        assert len(taken) == args.left
    b, a = statistics.median(before), statistics.median(after)
    print(json.dumps({
        "messages_per_round": args.messages,
        "rounds": args.rounds,
        "claim_only_ms_per_message": round(b * 1000, 3),
        "claim_and_inbox_ms_per_message": round(a * 1000, 3),
        "ratio_inbox_vs_claim_only": round(a / b, 2),
        "left_rows": args.left,
        "adopt_s": round(adopt_s, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
