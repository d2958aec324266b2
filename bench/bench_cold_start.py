"""Cold start of ``tracebot diagnose`` on a 2 KB paste, with a knowledge directory of 1,000 entries
(the bundled files copied under new ids). Prints JSON.

Targets (speed issue): ≤ 0.3 s with the cache warm, ≤ 1.5 s with the knowledge-base cache cold. Three
runs, each a fresh process: everything cold (empty ``$TRACEBOT_CACHE``: parse + build + train the
model), the parsed knowledge base cold but the trained model cached, and everything warm. The baseline
is the same warm run with the cache switched off (``TRACEBOT_CACHE=``, the model off too, as it
would otherwise retrain), i.e. parsing every file again.

Usage: .venv/bin/python bench/bench_cold_start.py [--entries 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_matcher import PASTE_2KB  # noqa: E402

TRACEBOT = str(Path(sys.executable).with_name("tracebot"))


def make_kb(where: Path, n: int) -> None:
    sources = sorted((REPO / "knowledge").rglob("*.yaml"))
    for i in range(n):
        src = sources[i % len(sources)]
        folder = where / src.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        if i < len(sources):
            shutil.copy(src, folder / src.name)
            continue
        new_id = f"{src.stem}-v{i}"
        text = re.sub(rf"^id: {re.escape(src.stem)}\s*$", f"id: {new_id}", src.read_text(encoding="utf-8"), count=1, flags=re.M)
        (folder / f"{new_id}.yaml").write_text(text, encoding="utf-8")


def run(kb: Path, paste: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([TRACEBOT, "diagnose", "--knowledge", str(kb), str(paste)], env=env, capture_output=True,
                   check=True, timeout=900)
    return round(time.perf_counter() - t, 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tracebot-cold-"))
    try:
        kb, cache = tmp / "knowledge", tmp / "cache"
        make_kb(kb, args.entries)
        paste = tmp / "paste.txt"
        paste.write_text(PASTE_2KB, encoding="utf-8")
        env = dict(os.environ, TRACEBOT_CACHE=str(cache))
        report: dict = {"bench": "cold_start", "entries": args.entries}
        report["all_cold_s"] = run(kb, paste, env)
        for stale in cache.glob("kb-*.pkl"):
            stale.unlink()
        report["kb_cache_cold_model_cached_s"] = run(kb, paste, env)
        report["warm_s"] = min(run(kb, paste, env) for _ in range(3))
        report["baseline_no_cache_no_model_s"] = run(kb, paste, dict(os.environ, TRACEBOT_CACHE="", TRACEBOT_MODEL="0"))
        report["warm_no_model_s"] = min(run(kb, paste, dict(env, TRACEBOT_MODEL="0")) for _ in range(3))
        report["targets"] = {"warm_le_0_3s": report["warm_s"] <= 0.3,
                             "kb_cache_cold_le_1_5s": report["kb_cache_cold_model_cached_s"] <= 1.5}
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
