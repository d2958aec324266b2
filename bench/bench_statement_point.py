"""What :meth:`RankingModel.statement_point` (calibrated per threshold, on every diagnosis of a stated problem)
costs against the constant it replaced (one point for every threshold), in the same run. Prints JSON: per
knowledge-base size, the rows it reads, its own CPU time, and the median CPU time of diagnosing a stated
problem and the 2 KB paste with it and with a constant in its place (5 x 20 calls each, interleaved).

Usage: .venv/bin/python bench/bench_statement_point.py [--sizes 53,1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_matcher import PASTE_2KB, scaled_kb, timed  # noqa: E402
from tracebot.config import DEFAULT_THRESHOLD  # noqa: E402
from tracebot.knowledge.loader import load_knowledge_base  # noqa: E402
from tracebot.matcher import Matcher  # noqa: E402

STATED = (
    "When our multi-GPU run hangs we suspect one GPU pair of the node\n\n"
    "Running a small distributed test on subsets of the GPUs, the subset with GPU 3 always fails."
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="53,1000")
    args = ap.parse_args()
    base, _ = load_knowledge_base(REPO / "knowledge")
    out: dict = {"bench": "statement_point", "sizes": []}
    for n in (int(s) for s in args.sizes.split(",")):
        kb = scaled_kb(base, n)
        model = Matcher(kb, model=False).train_model(extra=[("", None)])  # extra: never from the cache
        m = Matcher(kb, model=model)
        real = model.statement_point
        const = real(DEFAULT_THRESHOLD)
        row: dict = {"entries": len(kb.entries), "statements_rows": int(model.statements.shape[0]),
                     "statement_point_cpu_ms": round(statistics.median(
                         timed(lambda real=real: real(DEFAULT_THRESHOLD), 200, time.process_time)) * 1000, 3)}
        for name, text in (("stated", STATED), ("paste_2kb", PASTE_2KB)):
            new: list[float] = []
            old: list[float] = []
            for _ in range(5):
                model.statement_point = real  # type: ignore[method-assign]
                new += timed(lambda text=text, m=m: m.diagnose(text), 20, time.process_time)
                model.statement_point = lambda t, const=const: const  # type: ignore[method-assign]
                old += timed(lambda text=text, m=m: m.diagnose(text), 20, time.process_time)
            model.statement_point = real  # type: ignore[method-assign]
            a, b = statistics.median(new), statistics.median(old)
            row[name] = {"cpu_ms": round(a * 1000, 3), "constant_cpu_ms": round(b * 1000, 3), "ratio": round(a / b, 3)}
        out["sizes"].append(row)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
