"""The README's speed tables, from the benchmarks' JSON output (never typed by hand).

    .venv/bin/python bench/bench_kb_scaling.py > bench/results/kb_scaling.json
    .venv/bin/python bench/bench_slurm_log_scan.py > bench/results/slurm_log_scan.json
    .venv/bin/python bench/bench_model.py > bench/results/model.json
    .venv/bin/python bench/bench_cold_start.py --baseline /work/baseline > bench/results/cold_start.json
    .venv/bin/python bench/speed_table.py --readme README.md bench/results/kb_scaling.json \
        bench/results/slurm_log_scan.json bench/results/model.json bench/results/cold_start.json

Each argument is one benchmark's JSON (recognised by its ``bench`` field). Without ``--readme`` the tables
are printed (Markdown); with it, each is written into the README between its markers,
``<!-- speed-table:NAME -->`` and ``<!-- /speed-table:NAME -->`` (NAME: ``scaling``, ``big-logs``,
``model``, ``cold-start``, ``profile``), and the README's other text is left as it is; a table whose
benchmark was not given keeps its old text, and a given table without markers in the README is an error.
``profile_cold_start`` runs may be given several times (before.json after.json): one column each.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


def _s(x: object, digits: int = 2) -> str:
    return f"{x:.{digits}f} s" if isinstance(x, (int, float)) else "—"


def _x(x: object) -> str:
    return f"{x:.3g}×" if isinstance(x, (int, float)) else "—"


def _mbs(x: float) -> str:
    return "< 0.001 MB/s" if x < 0.001 else f"{x:,.0f} MB/s" if x >= 100 else f"{x:.3g} MB/s"


def scaling_table(r: dict) -> list[str]:
    rows = ["| entries | 1 MB log | 2 KB paste | candidate stage | single alternation (before) | matcher build |",
            "|---|---|---|---|---|---|"]
    for n, row in r["kb_scaling"].items():
        rows.append(f"| {int(n):,} | {row['log_1mb_ms']} ms | {row['paste_2kb_ms']} ms | {_mbs(row['candidate_stage_mb_s'])}"
                    f" | {_mbs(row['baseline_single_regex_mb_s'])} | {row['build_s']} s |")
    return rows


def big_log_rows(scaling: dict | None, slurm: dict | None) -> list[str]:
    rows = ["| log | tracebot | triage off | `rg -F` | `wc -l` | ÷ rg | ÷ wc -l | ÷ rg, triage off |",
            "|---|---|---|---|---|---|---|---|"]
    if scaling:
        b = scaling["big_log"]
        rows.append(f"| {b['log_mb']} MB, {b['entries']:,} entries, `diagnose` | {_s(b['tracebot_s'])} | {_s(b['tracebot_triage_off_s'])}"
                    f" | {_s(b.get('rg_F_s'), 3)} | {_s(b.get('wc_l_s'), 3)} | {_x(b.get('ratio_to_rg_F'))}"
                    f" | {_x(b.get('ratio_to_wc_l'))} | {_x(b.get('ratio_to_rg_F_triage_off'))} |")
    if slurm:
        scan = slurm["scan_log"]
        found = "middle error found" if scan["correct"] else "middle error NOT found"
        rows.append(f"| {slurm['log_mb']:,} MB job log, `scan_log` ({scan['peak_rss_mb']} MB peak RSS, {found}) | {_s(scan['seconds'])} | — | {_s(slurm.get('rg_F_s'), 3)} | {_s(slurm.get('wc_l_s'), 3)}"
                    f" | {_x(slurm.get('ratio_to_rg_F'))} | {_x(slurm.get('ratio_to_wc_l'))} | — |")
    return rows


COLD_ROWS = (
    ("python_floor", "`python -c pass` (the floor)", ""),
    ("warm", "warm cache, model on", "≤ 0.3 s"),
    ("warm_no_model", "warm cache, `TRACEBOT_MODEL=0`", "≤ 0.3 s"),
    ("warm_no_bytecode", "warm cache, model off, no bytecode cache", ""),
    ("matcher_cold_model_cached", "matcher cold, model cached", "≤ 1.5 s"),
    ("one_entry_edited", "one entry edited (that file parsed, the matcher built, the model trained again)", ""),
    ("one_entry_edited_helper", "… training in the helper process (`TRACEBOT_TRAIN_HELPER=1`)", ""),
    ("one_entry_edited_in_process", "… training in the process itself (`TRACEBOT_TRAIN_HELPER=0`)", ""),
    ("cold_no_model", "cache empty, model off", "≤ 1.5 s"),
    ("all_cold", "cache empty, model on (trains)", "≤ 1.5 s"),
    ("all_cold_helper", "… training in the helper process (`TRACEBOT_TRAIN_HELPER=1`)", ""),
    ("all_cold_in_process", "… training in the process itself (`TRACEBOT_TRAIN_HELPER=0`)", ""),
    ("no_cache_no_model", "no cache at all (`TRACEBOT_CACHE=`), model off", ""),
    ("long_log_all_cold", "1 MB log (over 200 lines: no model), cache empty", ""),
    ("long_log_warm", "1 MB log, warm cache", ""),
)


def cold_table(r: dict) -> list[str]:
    """One row per case; with a baseline (``--baseline``), its wall time and the ratio beside."""
    base = r.get("baseline_runs", {})
    head = f"| `tracebot diagnose`, 2 KB paste unless said, {r['entries']:,} entries | wall | CPU | target |"
    rows = [head + (" baseline wall | ÷ baseline |" if base else ""), "|---|---|---|---|" + ("---|---|" if base else "")]
    for key, label, target in COLD_ROWS:
        if key in r:
            row = f"| {label} | {_s(r[key]['wall_s'])} | {_s(r[key]['cpu_s'])} | {target} |"
            if base:
                row += f" {_s(base[key]['wall_s'])} | {_x(r[key].get('ratio_to_baseline'))} |" if key in base else " — | — |"
            rows.append(row)
    if "load_average" in r:
        load = r["load_average"]
        rows += ["", f"Load average (1, 5, 15 min) before: {load['before']}, after: {load['after']} ({r.get('cores', 2)} cores)."]
    return rows


def model_table(r: dict) -> list[str]:
    rows = ["| entries | training | 2 KB paste, model on | model off | the model's share | short question, model on |",
            "|---|---|---|---|---|---|"]
    for n, row in ((k, v) for k, v in r.items() if k.isdigit()):
        p, q = row["paste_2kb"], row["question"]
        rows.append(f"| {int(n):,} | {_s(row['train_s'])} | {p['median_ms']} ms | {p['model_off_ms']} ms | {p['model_ms']} ms"
                    f" | {q['median_ms']} ms |")
    if "load_average_at_start" in r:
        rows += ["", f"Load average (1, 5, 15 min) at start: {r['load_average_at_start']}, at end: {r['load_average_at_end']}."]
    return rows


def profile_table(profiles: list[tuple[str, dict]]) -> list[str]:
    """One column of CPU seconds per ``bench/profile_cold_start.py`` run (named by its file)."""
    steps = list(dict.fromkeys(step for _, r in profiles for step in r["steps"]))
    rows = [f"| step, cache empty, one process, {profiles[0][1]['entries']:,} entries (CPU) | "
            + " | ".join(f"`{name}`" for name, _ in profiles) + " |", "|---" * (len(profiles) + 1) + "|"]
    for step in steps:
        cells = [_s(r["steps"][step]["cpu_s"]) if step in r["steps"] else "—" for _, r in profiles]
        rows.append(f"| {step.replace('_', ' ')} | " + " | ".join(cells) + " |")
    rows.append("| **total** | " + " | ".join(f"**{_s(r['total']['cpu_s'])}**" for _, r in profiles) + " |")
    rows.append("| the model's cache file | " + " | ".join(f"{r['model_mb']} MB" for _, r in profiles) + " |")
    rows += ["", "Load average (1 min) at the end of each: " + ", ".join(str(r["load_average"][0]) for _, r in profiles) + "."]
    return rows


def tables(paths: list[str]) -> dict[str, list[str]]:
    """Each table the given benchmarks' JSON makes, by its marker's name, in the README's order."""
    loaded = [(Path(p).stem, json.loads(Path(p).read_text(encoding="utf-8"))) for p in paths]
    found = {r["bench"]: r for _, r in loaded if isinstance(r, dict) and "bench" in r}
    profiles = [(name, r) for name, r in loaded if isinstance(r, dict) and r.get("bench") == "profile_cold_start"]
    out: dict[str, list[str]] = {}
    if "kb_scaling" in found:
        out["scaling"] = scaling_table(found["kb_scaling"])
    if "kb_scaling" in found or "slurm_log_scan" in found:
        out["big-logs"] = big_log_rows(found.get("kb_scaling"), found.get("slurm_log_scan"))
    if "model" in found:
        out["model"] = model_table(found["model"])
    if "cold_start" in found:
        out["cold-start"] = cold_table(found["cold_start"])
    if profiles:
        out["profile"] = profile_table(profiles)
    return out


def into_readme(text: str, made: dict[str, list[str]]) -> str:
    """``text`` with each table of ``made`` between its markers (the markers kept, a blank line inside each)."""
    for name, rows in made.items():
        marked = re.compile(rf"(<!-- speed-table:{re.escape(name)} -->\n).*?(<!-- /speed-table:{re.escape(name)} -->)", re.S)
        if not marked.search(text):
            raise SystemExit(f"no <!-- speed-table:{name} --> ... <!-- /speed-table:{name} --> markers in the README")
        body = "\n".join(rows)
        text = marked.sub(lambda m, body=body: f"{m.group(1)}\n{body}\n\n{m.group(2)}", text, count=1)
    return text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="The README's speed tables from the benchmarks' JSON.")
    ap.add_argument("json", nargs="+", help="a benchmark's JSON output (several)")
    ap.add_argument("--readme", type=Path, help="write the tables into this README between their markers")
    args = ap.parse_args(argv)
    made = tables(args.json)
    if args.readme is None:
        print("\n\n".join("\n".join(rows) for rows in made.values()))
        return
    args.readme.write_text(into_readme(args.readme.read_text(encoding="utf-8"), made), encoding="utf-8")


if __name__ == "__main__":
    main()
