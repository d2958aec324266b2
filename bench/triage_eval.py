"""Log triage measured on a set of real multi-node logs: prints aggregates only (JSON).

The set is a ``cases.jsonl`` beside a ``logs/`` folder, one case per line: ``file`` (the log, relative to
the cases file), ``first_failure_line`` and ``acceptable_lines`` (any of them is the root-cause line, e.g.
within its traceback), ``entry`` (the knowledge entry of the root cause, null when no entry knows it)
and ``also_ok`` (other entries a reader would accept first), ``silent_ranks`` (the ranks that printed
nothing in a hang, or null) and ``kind``. For each log, ``diagnose`` runs on the file as ``tracebot
diagnose`` would, and three things are judged:

- **first failure line**: the reported first failure is on the root-cause line (exact or acceptable);
- **root cause first**: the first match is the entry, or the first failure names it; for a log whose
  root cause no entry knows, no root-cause entry is the confident first answer;
- **silent ranks** (logs with expected silent ranks): every one of them is named.

A held-out set is blind: read the aggregates, not the cases. ``--misses`` lists what went wrong, for
the one look after the last change to the matcher.

Usage: .venv/bin/python bench/triage_eval.py path/to/cases.jsonl [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tracebot.matcher import load_matcher  # noqa: E402
from tracebot.result import Diagnosis  # noqa: E402


def judge(case: dict, d: Diagnosis) -> dict[str, bool | None]:
    """Whether ``d`` got each of the three right for ``case`` (None: the case does not ask)."""
    ff = d.first_failure
    lines = {case["first_failure_line"], *(case.get("acceptable_lines") or [])}
    line_ok = ff is not None and ff.line_no in lines
    accepted = {case["entry"], *(case.get("also_ok") or [])} - {None}
    top = d.matches[0] if d.matches else None
    if case["entry"] is not None:
        root_ok = (top is not None and top.entry_id in accepted) or (ff is not None and ff.entry_id in accepted)
    else:
        root_ok = top is None or not top.confident or top.role != "root-cause" or top.entry_id in accepted
    expected_silent = case.get("silent_ranks") or []
    silent_ok = set(expected_silent) <= set(d.silent_ranks) if expected_silent else None
    return {"first_failure_line": line_ok, "root_cause_first": root_ok, "silent_ranks_named": silent_ok}


def _rate(values: list[bool | None]) -> dict[str, float | int] | None:
    asked = [v for v in values if v is not None]
    return {"right": sum(asked), "of": len(asked), "rate": round(sum(asked) / len(asked), 3)} if asked else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", type=Path)
    ap.add_argument("--misses", action="store_true", help="also list the misses (not for a blind set while tuning)")
    args = ap.parse_args()
    _kb, matcher, _errors = load_matcher(REPO / "knowledge")
    results: list[tuple[dict, dict[str, bool | None], Diagnosis]] = []
    for raw in args.cases.read_text().splitlines():
        if not raw.strip():
            continue
        case = json.loads(raw)
        d = matcher.diagnose_file(args.cases.parent / case["file"], deadline_s=None)
        results.append((case, judge(case, d), d))
    metrics = ("first_failure_line", "root_cause_first", "silent_ranks_named")
    report: dict[str, object] = {"logs": len(results)}
    report.update({m: _rate([j[m] for _c, j, _d in results]) for m in metrics})
    report["per_kind"] = {
        kind: {"logs": sum(c["kind"] == kind for c, _j, _d in results),
               **{m: _rate([j[m] for c, j, _d in results if c["kind"] == kind]) for m in metrics}}
        for kind in sorted({c["kind"] for c, _j, _d in results})
    }
    if args.misses:
        report["misses"] = [
            {"id": c["id"], "kind": c["kind"], "wrong": [m for m in metrics if j[m] is False],
             "expected": {"line": c["first_failure_line"], "entry": c["entry"], "silent": c.get("silent_ranks")},
             "got": {"line": d.first_failure.line_no if d.first_failure else None,
                     "first_failure_entry": d.first_failure.entry_id if d.first_failure else None,
                     "top": [m.entry_id for m in d.matches[:3]], "silent": d.silent_ranks}}
            for c, j, d in results if False in j.values()
        ]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
