#!/usr/bin/env python3
"""Validate the held-out triage set (stdlib only).

Checks every record of cases.jsonl:
  * required fields and types, unique ids, file == logs/<id>.log
  * the log exists, has min_lines..2500 lines (30 here), and its first line is not a comment
  * first_failure_text is exactly the line at first_failure_line (1-based)
  * acceptable_lines are valid line numbers
  * entry / also_ok are ids listed in tests/fresh/LABELS.md (or null)
  * kind is one of the four kinds, silent_ranks is null or a list of strings
Prints counts per kind / entry and exits non-zero on any error.

Usage: python3 tests/triage_heldout/check.py [--labels PATH]
(tests/triage_fresh/check.py runs the same checks on its own folder.)
"""
import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LABELS = os.path.join(HERE, "..", "fresh", "LABELS.md")
KINDS = {"user-code", "known-cascade", "watchdog-only", "other"}
FIELDS = {
    "id": str, "file": str, "source": str, "first_failure_line": int,
    "first_failure_text": str, "acceptable_lines": list, "rank": (str, type(None)),
    "host": (str, type(None)), "entry": (str, type(None)), "also_ok": list,
    "silent_ranks": (list, type(None)), "kind": str, "notes": str,
}


def load_labels(path):
    ids = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^- ([a-z0-9][a-z0-9-]*):", line)
            if m:
                ids.add(m.group(1))
    return ids


def read_lines(path):
    with open(path, encoding="utf-8", newline="") as f:
        data = f.read()
    lines = data.split("\n")
    if data.endswith("\n"):
        lines = lines[:-1]
    return lines


def main(here=HERE, min_lines=30):
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=DEFAULT_LABELS)
    args = ap.parse_args()
    labels = load_labels(args.labels)
    errors = []
    if not labels:
        errors.append(f"no label ids found in {args.labels}")

    recs, seen = [], set()
    with open(os.path.join(here, "cases.jsonl"), encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                recs.append(json.loads(raw))
            except ValueError as e:
                errors.append(f"cases.jsonl:{n}: bad JSON ({e})")

    for r in recs:
        rid = r.get("id", "?")
        where = f"case {rid}"
        for k, t in FIELDS.items():
            if k not in r:
                errors.append(f"{where}: missing field {k}")
            elif not isinstance(r[k], t) or (t is int and isinstance(r[k], bool)):
                errors.append(f"{where}: field {k} has type {type(r[k]).__name__}")
        extra = set(r) - set(FIELDS)
        if extra:
            errors.append(f"{where}: unexpected fields {sorted(extra)}")
        if rid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(rid)
        if r.get("file") != f"logs/{rid}.log":
            errors.append(f"{where}: file should be logs/{rid}.log")
        if r.get("kind") not in KINDS:
            errors.append("{}: bad kind {!r}".format(where, r.get("kind")))
        if not str(r.get("source", "")).startswith("https://"):
            errors.append(f"{where}: source is not a URL")
        for lab in ([r.get("entry")] if r.get("entry") else []) + list(r.get("also_ok") or []):
            if lab not in labels:
                errors.append(f"{where}: label {lab!r} not in LABELS.md")
        if r.get("entry") and r.get("entry") in (r.get("also_ok") or []):
            errors.append(f"{where}: entry repeated in also_ok")
        sr = r.get("silent_ranks")
        if isinstance(sr, list) and not all(isinstance(x, str) for x in sr):
            errors.append(f"{where}: silent_ranks must be strings")

        path = os.path.join(here, r.get("file", ""))
        if not os.path.isfile(path):
            errors.append(f"{where}: missing log {path}")
            continue
        lines = read_lines(path)
        if not min_lines <= len(lines) <= 2500:
            errors.append(f"{where}: log has {len(lines)} lines (want {min_lines}..2500)")
        if lines and lines[0].lstrip().startswith("#"):
            errors.append(f"{where}: first log line looks like a comment")
        ffl = r.get("first_failure_line")
        if isinstance(ffl, int) and 1 <= ffl <= len(lines):
            if lines[ffl - 1] != r.get("first_failure_text"):
                errors.append(f"{where}: first_failure_text != line {ffl} ({lines[ffl - 1][:80]!r})")
        else:
            errors.append(f"{where}: first_failure_line {ffl!r} out of range")
        for a in r.get("acceptable_lines") or []:
            if not isinstance(a, int) or not 1 <= a <= len(lines):
                errors.append(f"{where}: acceptable line {a!r} out of range")

    kinds = collections.Counter(r.get("kind") for r in recs)
    entries = collections.Counter(r.get("entry") or "(none)" for r in recs)
    sources = {re.sub(r"(/blob/[0-9a-f]+/|/issues/|#).*$", "", r.get("source", "")) for r in recs}
    print(f"cases: {len(recs)}")
    print("per kind: " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    print("per entry: " + ", ".join(f"{k}={v}" for k, v in sorted(entries.items())))
    print(f"silent_ranks labelled: {sum(1 for r in recs if r.get('silent_ranks'))}")
    print(f"distinct source repos/threads: {len(sources)}")
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
