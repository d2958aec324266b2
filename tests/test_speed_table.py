"""``bench/speed_table.py`` writes the README's speed tables from the benchmarks' JSON: the figures a reader
sees are the ones a benchmark printed, with the ratios to ripgrep and to ``wc -l``, and the README's own text
around the tables stays as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import speed_table
from tests.conftest import REPO

SCALING = {
    "bench": "kb_scaling",
    "kb_scaling": {"1000": {"log_1mb_ms": 5.1, "paste_2kb_ms": 1.3, "candidate_stage_mb_s": 1839.2,
                            "baseline_single_regex_mb_s": 50.6, "build_s": 0.55}},
    "big_log": {"log_mb": 200, "entries": 1000, "tracebot_s": 0.3, "tracebot_triage_off_s": 0.29, "rg_F_s": 0.51,
                "wc_l_s": 0.023, "ratio_to_rg_F": 0.588, "ratio_to_wc_l": 13.04, "ratio_to_rg_F_triage_off": 0.5686},
}
SLURM = {"bench": "slurm_log_scan", "log_mb": 2049, "scan_log": {"seconds": 2.78, "peak_rss_mb": 49.9, "correct": True},
         "rg_F_s": 0.134, "wc_l_s": 0.191, "ratio_to_rg_F": 20.75, "ratio_to_wc_l": 14.55}
COLD = {"bench": "cold_start", "entries": 1000, "cores": 2, "load_average": {"before": [1.0, 1.0, 1.0], "after": [1.5, 1.0, 1.0]},
        "warm": {"wall_s": 0.27, "cpu_s": 0.25, "ratio_to_baseline": 0.86},
        "baseline_runs": {"warm": {"wall_s": 0.314}}}
README = """# x

Some prose the tables sit in.

<!-- speed-table:scaling -->
| old | table |
<!-- /speed-table:scaling -->

Between the tables.

<!-- speed-table:big-logs -->
old
<!-- /speed-table:big-logs -->

<!-- speed-table:cold-start -->
<!-- /speed-table:cold-start -->

<!-- speed-table:model -->
the model's table: no JSON given, kept
<!-- /speed-table:model -->
End.
"""


def _write(tmp_path: Path, **results: dict) -> list[str]:
    paths = []
    for name, value in results.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(value), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_the_tables_are_written_between_their_markers_from_the_json(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    speed_table.main(["--readme", str(readme), *_write(tmp_path, scaling=SCALING, slurm=SLURM, cold=COLD)])
    text = readme.read_text(encoding="utf-8")
    assert "| old | table |" not in text and "\nold\n" not in text
    assert "| 1,000 | 5.1 ms | 1.3 ms | 1,839 MB/s | 50.6 MB/s | 0.55 s |" in text
    # the ratios to ripgrep and to wc -l, as the benchmarks printed them
    assert "| 200 MB, 1,000 entries, `diagnose` | 0.30 s | 0.29 s | 0.510 s | 0.023 s | 0.588× | 13× | 0.569× |" in text
    assert "| 2,049 MB job log, `scan_log` (49.9 MB peak RSS, middle error found) | 2.78 s | — | 0.134 s | 0.191 s | 20.8× | 14.6× | — |" in text
    assert "| warm cache, model on | 0.27 s | 0.25 s | ≤ 0.3 s | 0.31 s | 0.86× |" in text
    assert "the model's table: no JSON given, kept" in text
    for prose in ("# x\n\nSome prose the tables sit in.\n\n", "\n\nBetween the tables.\n\n", "\nEnd.\n"):
        assert prose in text
    # written again from the same JSON: the same file
    speed_table.main(["--readme", str(readme), *_write(tmp_path, scaling=SCALING, slurm=SLURM, cold=COLD)])
    assert readme.read_text(encoding="utf-8") == text


def test_a_table_without_markers_is_an_error_and_the_readme_is_left_alone(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="speed-table:cold-start"):
        speed_table.main(["--readme", str(readme), *_write(tmp_path, cold=COLD)])
    assert readme.read_text(encoding="utf-8") == "# no markers\n"


def test_the_readme_s_tables_are_the_committed_results():
    results = REPO / "bench" / "results"
    made = speed_table.tables([str(results / f) for f in ("kb_scaling.json", "slurm_log_scan.json", "model.json", "cold_start.json")])
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert set(made) == {"scaling", "big-logs", "model", "cold-start"}
    assert speed_table.into_readme(text, made) == text, "run bench/speed_table.py --readme README.md bench/results/…"
