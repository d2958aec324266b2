"""Where an empty-cache cold start's time goes: the steps of ``tracebot diagnose`` with nothing cached and
the model trained in this one process, each timed (wall and CPU seconds), at 1,000 entries by default.
Prints JSON. The steps are the ones :func:`tracebot.matcher.loading.load_matcher` and
:func:`tracebot.matcher.training.train` take, called one by one so that each can be timed.

Run it with a bytecode cache (as ``bench/bench_cold_start.py`` does), or the first run also compiles:
    PYTHONPYCACHEPREFIX=/tmp/pyc .venv/bin/python bench/profile_cold_start.py [--entries 1000] [--distinct]
"""

from __future__ import annotations

import time

T0, C0 = time.perf_counter(), time.process_time()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


class Clock:
    """Wall and CPU seconds of each step since the previous one."""

    def __init__(self) -> None:
        self.steps: dict[str, dict[str, float]] = {}
        self.at = (T0, C0)

    def mark(self, step: str) -> None:
        now = (time.perf_counter(), time.process_time())
        self.steps[step] = {"wall_s": round(now[0] - self.at[0], 3), "cpu_s": round(now[1] - self.at[1], 3)}
        self.at = now


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--distinct", action="store_true", help="each copy's texts varied (bench_cold_start.make_kb)")
    args = ap.parse_args()
    clock = Clock()
    tmp = Path(tempfile.mkdtemp(prefix="tracebot-profile-"))
    os.environ["TRACEBOT_CACHE"] = str(tmp / "cache")
    try:
        from bench.bench_cold_start import make_kb
        from bench.bench_matcher import PASTE_2KB

        make_kb(tmp / "knowledge", args.entries, args.distinct)
        clock.at = (time.perf_counter(), time.process_time())  # making the knowledge base is not timed
        run(tmp / "knowledge", PASTE_2KB, clock)
    finally:
        shutil.rmtree(tmp)


def run(directory: Path, paste: str, clock: Clock) -> None:
    import tracebot.cli  # noqa: F401 — what the command imports before it loads anything
    from tracebot.knowledge.cache import cache_file, lookup, store
    from tracebot.knowledge.loader import load_knowledge_base
    from tracebot.matcher.core import Matcher
    from tracebot.matcher.index import CompiledKB
    from tracebot.matcher.keys import model_key
    from tracebot.matcher.loading import matcher_key

    clock.mark("start_and_import_cli")
    key = matcher_key(directory)
    clock.mark("matcher_key_hash_files")
    kb, errors = load_knowledge_base(directory, whole=False)
    clock.mark("parse_1000_files_and_store_their_parses")
    index = CompiledKB(kb)
    index.model_key = model_key(index.entries, kb.silence)
    clock.mark("build_matcher_index")
    store("matcher", key, (kb, errors, index))
    matcher = Matcher(kb, model=False, index=index)
    clock.mark("store_matcher")
    from tracebot.matcher import training
    from tracebot.matcher.features import text_info

    clock.mark("import_scikit_learn_scipy")  # SciPy only since the eleventh round (name kept: results compare by step)
    samples, parts, owners = training.training_texts(index.entries, (), (), (), kb.silence)
    spaces = training.FittedSpaces(parts, owners, len(index.entries))
    clock.mark("fit_tfidf_spaces")
    model = training.untrained_model(index.entries, spaces)
    clock.mark("export_spaces")
    xs, ys = training.training_rows(model, spaces, samples, matcher.evidence_of, text_info)
    clock.mark("training_rows")
    training.fit_regressions(model, xs, ys, samples)
    clock.mark("two_logistic_regressions")  # the ranking and the confidence model (names kept: bench/results compare by step)
    training.calibrate(model, samples, xs, ys)
    clock.mark("calibration_5_folds")
    store("model", index.model_key, model)
    clock.mark("store_model")
    matcher.model = lookup("model", index.model_key)
    matcher.diagnose(paste)
    clock.mark("load_model_and_answer")
    model_file = cache_file("model", index.model_key)
    steps = clock.steps
    print(json.dumps({
        "bench": "profile_cold_start", "entries": len(index.entries), "load_average": [round(x, 2) for x in os.getloadavg()],
        "steps": steps,
        "total": {k: round(sum(s[k] for s in steps.values()), 3) for k in ("wall_s", "cpu_s")},
        "model_mb": round(model_file.stat().st_size / 1e6, 1) if model_file else None,
        "training_texts": len(samples), "training_rows": int(sum(len(x) for x in xs)), "parts": len(parts),
    }, indent=2))


if __name__ == "__main__":
    main()
