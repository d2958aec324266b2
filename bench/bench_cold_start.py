"""Cold start of ``tracebot diagnose`` on a 2 KB paste, with a knowledge directory of 1,000 entries
(the bundled entries copied under new ids, ``sources.yaml`` beside them). Prints JSON.

Targets (speed issue): ≤ 0.3 s with the cache warm, ≤ 1.5 s with it cold. Every run is a fresh
process; each figure is the median of ``--repeat`` runs, wall seconds and CPU seconds (user + system:
on a shared machine the wall time also holds other people's work), with the best wall time beside it.
``--baseline DIR`` (a checkout of the previous version with its own ``.venv``) runs every case for it
too, alternating run by run, and adds ``ratio_to_baseline`` (median wall, this version ÷ baseline). Python runs with a bytecode cache
(``PYTHONPYCACHEPREFIX`` in the bench's temporary directory, filled first for tracebot and the libraries
training imports), as installed packages have; ``warm_no_bytecode`` is the warm run without one
(``PYTHONDONTWRITEBYTECODE=1``).

- ``python_floor``: ``python -c pass``, the interpreter alone (the baseline of every other row);
- ``all_cold``: empty ``$TRACEBOT_CACHE``: parse, build the matcher, train the ranking model (in a
  helper process when a core is idle, :mod:`tracebot.matcher.trainer`); ``all_cold_helper`` and
  ``all_cold_in_process`` force the helper on and off (``TRACEBOT_TRAIN_HELPER=1`` / ``0``);
- ``long_log_all_cold`` / ``long_log_warm``: a 1 MB multi-node log (over 200 lines, so the line rules
  answer it, never the model), cache empty / filled; ``model_files_after`` counts the model files the
  cold run left in the cache (none: it did not train);
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

Usage: .venv/bin/python bench/bench_cold_start.py [--entries 1000] [--distinct] [--repeat 3] [--baseline /work/baseline] [--cases a,b]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_matcher import PASTE_2KB, make_log  # noqa: E402


def make_kb(where: Path, n: int, distinct: bool = False) -> None:
    """``n`` entry files: the bundled entries, then copies of them under new ids; the side files
    (``sources.yaml``, ``silence.yaml``) once, as in a real knowledge base. ``distinct``: each copy's texts
    varied (:func:`varied`), so that no two entries share their example lines, anchors or phrases: with plain
    copies the 1,000 entries hold ~460 distinct examples, and anything memoised per text looks free."""
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
        if distinct:
            text = varied(text, i // len(sources))
        (folder / f"{new_id}.yaml").write_text(text, encoding="utf-8")


# what an entry says in words: varied in a distinct copy (ids, sources, related ids, regexes and the rest
# stay as they are, so the copy loads without a problem)
VARIED_KEYS = {"title", "summary", "cause", "fix", "ja", "anchors", "exemplars", "phrases", "match", "no_match", "todo_match"}
_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_]{2,}(?![A-Za-z0-9_])")


def varied(text: str, copy: int) -> str:
    """An entry file's YAML with every word of three characters or more in its texts (:data:`VARIED_KEYS`;
    a word starts with a letter, ``CUDA_ERROR_ASSERT`` is one) given the copy's own ending ("memory" ->
    "memoryqc"), the same in its anchors and examples,
    so an anchor still finds its example lines; written back with ``yaml.safe_dump`` (block style)."""
    import yaml

    ending = "q" + "abcdefghijklmnopqrstuvwxyz"[copy % 26] + ("" if copy < 26 else str(copy // 26))

    def vary(value: object, on: bool) -> object:
        if isinstance(value, dict):
            return {k: vary(v, on or k in VARIED_KEYS) for k, v in value.items()}
        if isinstance(value, list):
            return [vary(v, on) for v in value]
        if isinstance(value, str) and on:
            return _WORD.sub(lambda m: m.group() + ending, value)
        return value

    data = yaml.safe_load(text)
    return yaml.safe_dump(vary(data, False), sort_keys=False, allow_unicode=True, width=100)


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


def summary(runs: list[tuple[float, float]]) -> dict[str, float]:
    """Median wall and CPU seconds, and the best wall time (the least disturbed by other work)."""
    return {"wall_s": round(statistics.median(w for w, _ in runs), 3),
            "cpu_s": round(statistics.median(c for _, c in runs), 3),
            "best_wall_s": round(min(w for w, _ in runs), 3), "walls": [round(w, 2) for w, _ in runs]}


class Version:
    """One tracebot to time: its command, its cache directory and the environment it runs in."""

    def __init__(self, repo: Path, tmp: Path, name: str):
        self.repo = repo
        self.python = str(repo / ".venv" / "bin" / "python")
        self.tracebot = str(repo / ".venv" / "bin" / "tracebot")
        self.cache = tmp / f"cache-{name}"
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TRACEBOT_MODEL")}
        base["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        self.base = base
        subprocess.run([self.python, "-m", "compileall", "-q", str(repo / "bot"), str(repo / "plugins")],
                       env=base, check=True, capture_output=True, timeout=300)
        # the libraries training imports (scipy) get their bytecode too, as installed
        # packages have it: otherwise the one cold run with the model also compiles them (~2 s)
        subprocess.run([self.python, "-c", "import tracebot.matcher.training"],
                       env=base, check=True, capture_output=True, timeout=300)

    def empty_cache(self) -> None:
        shutil.rmtree(self.cache, ignore_errors=True)

    def drop_matcher(self) -> None:
        for p in [*self.cache.glob("kb-*.pkl"), *self.cache.glob("files-*.pkl"), *self.cache.glob("matcher-*.pkl")]:
            p.unlink()

    def model_files(self) -> int:
        return len(list(self.cache.glob("model-*.pkl")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="a checkout of the previous version with its own .venv: "
                    "each case is run for it too, alternating with this one")
    ap.add_argument("--cases", help="comma-separated names of the cases to run (default: all)")
    ap.add_argument("--distinct", action="store_true", help="each copy's texts varied (make_kb): no two entries "
                    "share an example line, an anchor or a phrase")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tracebot-cold-"))
    try:
        kb = tmp / "knowledge"
        make_kb(kb, args.entries, args.distinct)
        paste = tmp / "paste.txt"
        paste.write_text(PASTE_2KB, encoding="utf-8")
        log = tmp / "big.log"  # a long log (over 200 lines): answered by the line rules, never the model
        log.write_text(make_log(1 << 20), encoding="utf-8")
        versions = {"now": Version(REPO, tmp, "now")}
        if args.baseline:
            versions["baseline"] = Version(args.baseline.resolve(), tmp, "baseline")

        edits = iter(range(1_000_000))
        edited = sorted(p for p in kb.rglob("*.yaml") if p.parent != kb)[0]  # an entry, not a side file

        def edit_one_entry(_v: Version) -> None:
            text = edited.read_text(encoding="utf-8")
            edited.write_text(re.sub(r"^title: .*$", f"title: edited {next(edits)}", text, count=1, flags=re.M), encoding="utf-8")

        # name -> (input, environment changes, what to do before each run)
        cases: dict[str, tuple[Path | None, dict[str, str | None], object]] = {
            "python_floor": (None, {}, None),
            "all_cold": (paste, {}, Version.empty_cache),
            "all_cold_helper": (paste, {"TRACEBOT_TRAIN_HELPER": "1"}, Version.empty_cache),
            "all_cold_in_process": (paste, {"TRACEBOT_TRAIN_HELPER": "0"}, Version.empty_cache),
            "long_log_all_cold": (log, {}, Version.empty_cache),
            "long_log_warm": (log, {}, None),
            "matcher_cold_model_cached": (paste, {}, Version.drop_matcher),
            "warm": (paste, {}, None),
            "one_entry_edited": (paste, {}, edit_one_entry),
            "one_entry_edited_helper": (paste, {"TRACEBOT_TRAIN_HELPER": "1"}, edit_one_entry),
            "one_entry_edited_in_process": (paste, {"TRACEBOT_TRAIN_HELPER": "0"}, edit_one_entry),
            "cold_no_model": (paste, {"TRACEBOT_MODEL": "0"}, Version.empty_cache),
            "warm_no_model": (paste, {"TRACEBOT_MODEL": "0"}, None),
            "warm_no_bytecode": (paste, {"TRACEBOT_MODEL": "0", "PYTHONDONTWRITEBYTECODE": "1"}, None),
            "no_cache_no_model": (paste, {"TRACEBOT_MODEL": "0", "TRACEBOT_CACHE": ""}, None),
        }
        chosen = args.cases.split(",") if args.cases else list(cases)
        report: dict = {"bench": "cold_start", "entries": args.entries, "distinct": args.distinct, "repeat": args.repeat,
                        "cores": os.cpu_count(), "load_average": {"before": [round(x, 2) for x in os.getloadavg()]},
                        "statistic": "median of the runs (best_wall_s: the fastest)"}
        if args.baseline:
            report["baseline"] = {"repo": str(args.baseline), "commit": subprocess.run(
                ["git", "-C", str(args.baseline), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}
        for name in chosen:
            given, changes, before = cases[name]
            runs: dict[str, list[tuple[float, float]]] = {v: [] for v in versions}
            models: dict[str, int] = {}
            for _ in range(args.repeat):
                for vname, v in versions.items():  # alternating: both meet the same load
                    env = dict(v.base, TRACEBOT_CACHE=str(v.cache))
                    env.update({k: x for k, x in changes.items() if x is not None})
                    argv = [v.python, "-c", "pass"] if given is None else \
                        [v.tracebot, "diagnose", "--knowledge", str(kb), str(given)]
                    runs[vname].append(run(argv, env, functools.partial(before, v) if before else None))
                    models[vname] = v.model_files()
            report[name] = summary(runs["now"])
            if name.startswith("long_log"):
                report[name]["model_files_after"] = models["now"]
            if "baseline" in versions:
                report.setdefault("baseline_runs", {})[name] = summary(runs["baseline"])
                report[name]["ratio_to_baseline"] = round(report[name]["wall_s"] / max(1e-9, report["baseline_runs"][name]["wall_s"]), 3)
        report["load_average"]["after"] = [round(x, 2) for x in os.getloadavg()]
        if "python_floor" in report and "warm" in report:
            report["warm_over_python_floor"] = round(report["warm"]["wall_s"] / report["python_floor"]["wall_s"], 1)
        targets = {"warm_le_0_3s": ("warm", 0.3), "warm_no_model_le_0_3s": ("warm_no_model", 0.3),
                   "cold_no_model_le_1_5s": ("cold_no_model", 1.5), "all_cold_le_1_5s": ("all_cold", 1.5),
                   "matcher_cold_model_cached_le_1_5s": ("matcher_cold_model_cached", 1.5)}
        report["targets"] = {t: report[c]["wall_s"] <= limit for t, (c, limit) in targets.items() if c in report}
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
