"""The ranking model: training time and answering time as the knowledge base grows. Prints JSON.

Targets (matcher issue): training at load ≤ 2 s with 1,000 entries; a 2 KB paste ≤ 5 ms median with
1,000 entries. The baseline in the same run is the same matcher with the model off (``model=False``),
so ``model_ms`` is what the model adds to a paste; ``median_cpu_ms`` / ``model_off_cpu_ms`` are the same
medians in CPU time (200 calls each), which other work on a shared machine inflates far less. Run it
with another checkout's interpreter (``/work/baseline/.venv/bin/python bench/bench_model.py``) to time
that version's code with this benchmark. Training is timed after the training code is imported
(SciPy, ~0.4 s, paid once per process, and only when no cached model exists).

``--distinct``: the knowledge base of ``bench_cold_start.make_kb(..., distinct=True)`` (each copy's texts
varied, no two entries sharing an example line, an anchor or a phrase), where the plain copies hide the
cost of anything memoised per text.

Usage: .venv/bin/python bench/bench_model.py [--sizes 53,1000] [--distinct] (bench/results/model.json;
speed_table.py makes the README's table of it)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_matcher import PASTE_2KB, scaled_kb, timed  # noqa: E402
from tracebot.knowledge.loader import KnowledgeBase, load_knowledge_base  # noqa: E402
from tracebot.matcher import Matcher  # noqa: E402

QUESTION = "my training job gets slower and slower and then NCCL times out on one node, how do I debug this?"


def _first(m: Matcher, text: str) -> str | None:
    d = m.diagnose(text)
    return d.matches[0].entry_id if d.matches else None


def _distinct_kb(n: int) -> KnowledgeBase:
    from bench.bench_cold_start import make_kb

    with tempfile.TemporaryDirectory(prefix="tracebot-bench-model-") as tmp:
        make_kb(Path(tmp), n, distinct=True)
        kb, _ = load_knowledge_base(Path(tmp))
    return kb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="53,1000")
    ap.add_argument("--distinct", action="store_true", help="each copy's texts varied (bench_cold_start.make_kb)")
    args = ap.parse_args()
    base, _ = load_knowledge_base(REPO / "knowledge")
    import tracebot.matcher.training  # noqa: F401 — importing the training code (SciPy) is not training

    out: dict = {"bench": "model", "distinct": args.distinct, "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    for n in (int(s) for s in args.sizes.split(",")):
        kb = _distinct_kb(n) if args.distinct else scaled_kb(base, n)
        plain = Matcher(kb, model=False)
        t = time.perf_counter()
        model = plain.train_model(extra=[("", None)])  # extra: never from the cache
        train_s = time.perf_counter() - t
        with_model = Matcher(kb, model=model)
        row = {"entries": len(kb.entries), "train_s": round(train_s, 2), "report": model.report}
        for name, text in (("paste_2kb", PASTE_2KB), ("question", QUESTION)):
            with_model.diagnose(text)
            on = statistics.median(timed(lambda text=text, m=with_model: m.diagnose(text), 50))
            off = statistics.median(timed(lambda text=text, m=plain: m.diagnose(text), 50))
            # CPU time too: on a shared machine a burst of other work inflates every wall sample of a run
            on_cpu = statistics.median(timed(lambda text=text, m=with_model: m.diagnose(text), 200, time.process_time))
            off_cpu = statistics.median(timed(lambda text=text, m=plain: m.diagnose(text), 200, time.process_time))
            row[name] = {"median_ms": round(on * 1000, 2), "model_off_ms": round(off * 1000, 2),
                         "model_ms": round((on - off) * 1000, 2), "median_cpu_ms": round(on_cpu * 1000, 2),
                         "model_off_cpu_ms": round(off_cpu * 1000, 2), "first": _first(with_model, text)}
        out[str(n)] = row
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
