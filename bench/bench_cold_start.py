"""Cold start of ``tracebot diagnose`` on a 2 KB paste, with a knowledge directory of 1,000 entries
(the bundled entries copied under new ids, ``sources.yaml`` beside them). Prints JSON.

Targets (speed issue): ≤ 0.3 s with the cache warm, ≤ 1.5 s with it cold. Every run is a fresh
process; each figure is the best of ``--repeat`` runs, wall seconds and CPU seconds (user + system:
on a shared machine the wall time also holds other people's work). Python runs with a bytecode cache
(``PYTHONPYCACHEPREFIX`` in the bench's temporary directory, filled first for tracebot and the libraries
training imports), as installed packages have; ``warm_no_bytecode`` is the warm run without one
(``PYTHONDONTWRITEBYTECODE=1``).

- ``python_floor``: ``python -c pass``, the interpreter alone (the baseline of every other row);
- ``all_cold``: empty ``$TRACEBOT_CACHE``: parse, build the matcher, train the ranking model (in a
  helper process when a core is idle, :mod:`tracebot.matcher.trainer`); ``all_cold_helper`` and
  ``all_cold_in_process`` force the helper on and off (``TRACEBOT_TRAIN_HELPER=1`` / ``0``);
- ``matcher_cold_model_cached``: the parsed entries and the built matcher removed from the cache, the
  trained model left;
- ``one_entry_edited``: one entry's title changed, everything else cached: what an edit of an entry
  under ``knowledge/`` costs (that file parsed, the matcher built and the model trained again);
  ``one_entry_edited_helper`` / ``_in_process`` as above;
- ``cold_no_model`` / ``warm_no_model``: ``TRACEBOT_MODEL=0``, cache empty / filled;
- ``warm``: everything cached, model on;
- ``no_cache_no_model``: ``TRACEBOT_CACHE=`` (no cache at all), model off: the time before any cache.

``load_average`` (1, 5, 15 minutes) is read before and after: on a shared machine it says how much of the
wall time was other people's work, and whether the helper had a core to itself.

Usage: .venv/bin/python bench/bench_cold_start.py [--entries 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
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
    """``n`` entry files: the bundled entries, then copies of them under new ids; the side files
    (``sources.yaml``, ``silence.yaml``) once, as in a real knowledge base."""
    side = ("sources.yaml", "silence.yaml")
    sources = sorted(p for p in (REPO / "knowledge").rglob("*.yaml") if p.parent != REPO / "knowledge")
    where.mkdir(parents=True, exist_ok=True)
    for name in side:
        shutil.copy(REPO / "knowledge" / name, where / name)
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


def run(argv: list[str], env: dict[str, str], before=None) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process; ``before()`` runs first, untimed."""
    if before:
        before()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True, timeout=900)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime


def best(argv: list[str], env: dict[str, str], repeat: int, before=None) -> dict[str, float]:
    runs = [run(argv, env, before) for _ in range(repeat)]
    return {"wall_s": round(min(w for w, _ in runs), 3), "cpu_s": round(min(c for _, c in runs), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tracebot-cold-"))
    try:
        kb, cache = tmp / "knowledge", tmp / "cache"
        make_kb(kb, args.entries)
        paste = tmp / "paste.txt"
        paste.write_text(PASTE_2KB, encoding="utf-8")
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TRACEBOT_MODEL")}
        base["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "bot"), str(REPO / "plugins")],
                       env=base, check=True, capture_output=True, timeout=300)
        # the libraries training imports (scikit-learn, scipy) get their bytecode too, as installed
        # packages have it: otherwise the one cold run with the model also compiles them (~2 s)
        subprocess.run([sys.executable, "-c", "import tracebot.matcher.training"],
                       env=base, check=True, capture_output=True, timeout=300)
        diagnose = [TRACEBOT, "diagnose", "--knowledge", str(kb), str(paste)]
        env = dict(base, TRACEBOT_CACHE=str(cache))
        no_model = dict(env, TRACEBOT_MODEL="0")

        def empty_cache() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        def drop_matcher() -> None:
            for p in [*cache.glob("kb-*.pkl"), *cache.glob("files-*.pkl"), *cache.glob("matcher-*.pkl")]:
                p.unlink()

        edits = iter(range(1_000_000))
        edited = sorted(p for p in kb.rglob("*.yaml") if p.name != "sources.yaml")[0]

        def edit_one_entry() -> None:
            text = edited.read_text(encoding="utf-8")
            edited.write_text(re.sub(r"^title: .*$", f"title: edited {next(edits)}", text, count=1, flags=re.M), encoding="utf-8")

        report: dict = {"bench": "cold_start", "entries": args.entries, "repeat": args.repeat,
                        "cores": os.cpu_count(), "load_average": {"before": [round(x, 2) for x in os.getloadavg()]}}
        report["python_floor"] = best([sys.executable, "-c", "pass"], base, args.repeat)
        helper, in_process = dict(env, TRACEBOT_TRAIN_HELPER="1"), dict(env, TRACEBOT_TRAIN_HELPER="0")
        report["all_cold"] = best(diagnose, env, args.repeat, empty_cache)
        report["all_cold_helper"] = best(diagnose, helper, args.repeat, empty_cache)
        report["all_cold_in_process"] = best(diagnose, in_process, args.repeat, empty_cache)
        report["matcher_cold_model_cached"] = best(diagnose, env, args.repeat, drop_matcher)
        report["warm"] = best(diagnose, env, args.repeat)
        report["one_entry_edited"] = best(diagnose, env, args.repeat, edit_one_entry)
        report["one_entry_edited_helper"] = best(diagnose, helper, args.repeat, edit_one_entry)
        report["one_entry_edited_in_process"] = best(diagnose, in_process, args.repeat, edit_one_entry)
        report["cold_no_model"] = best(diagnose, no_model, args.repeat, empty_cache)
        report["warm_no_model"] = best(diagnose, no_model, args.repeat)
        report["warm_no_bytecode"] = best(diagnose, dict(no_model, PYTHONDONTWRITEBYTECODE="1"), args.repeat)
        report["no_cache_no_model"] = best(diagnose, dict(base, TRACEBOT_CACHE="", TRACEBOT_MODEL="0"), args.repeat)
        report["load_average"]["after"] = [round(x, 2) for x in os.getloadavg()]
        floor = report["python_floor"]["wall_s"]
        report["warm_over_python_floor"] = round(report["warm"]["wall_s"] / floor, 1)
        report["targets"] = {
            "warm_le_0_3s": report["warm"]["wall_s"] <= 0.3,
            "warm_no_model_le_0_3s": report["warm_no_model"]["wall_s"] <= 0.3,
            "cold_no_model_le_1_5s": report["cold_no_model"]["wall_s"] <= 1.5,
            "all_cold_le_1_5s": report["all_cold"]["wall_s"] <= 1.5,
            "matcher_cold_model_cached_le_1_5s": report["matcher_cold_model_cached"]["wall_s"] <= 1.5,
        }
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
