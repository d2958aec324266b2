"""Validate the fresh blind evaluation set (tests/fresh/cases.jsonl).

Checks that every line is a JSON object of the documented shape, that ids are unique,
that labels come from the fixed list of 53 knowledge-base ids, that kinds are known and
that the set meets its minimum sizes; then prints the counts per kind and per label.
Exits non-zero on any problem. Plain Python 3.11 standard library.

Usage: python3 tests/fresh/check.py [path/to/cases.jsonl]
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

LABELS = frozenset(
    {
        "amd-iommu-hang",
        "collective-mismatch",
        "cuda-device-side-assert",
        "cuda-driver-version-insufficient",
        "cuda-illegal-memory-access",
        "cuda-no-kernel-image",
        "cuda-oom",
        "dataloader-shm-bus-error",
        "ddp-unused-parameters",
        "deepspeed-loss-scale-minimum",
        "disk-full-on-save",
        "distributed-hang-py-spy",
        "efa-security-group-init-stall",
        "fsx-lustre-large-data",
        "gpu-ecc-error",
        "gpu-fallen-off-bus",
        "gpu-zombie-process",
        "host-oom-killed",
        "isolate-bad-gpus",
        "master-port-in-use",
        "nccl-invalid-usage-duplicate-gpu",
        "nccl-network-hang",
        "nccl-remote-error",
        "nccl-shm-too-small",
        "nccl-system-error-gpu-memory",
        "nccl-unhandled-cuda-error",
        "nccl-watchdog-timeout",
        "no-gpu-visible",
        "process-group-not-initialized",
        "py-spy-permission-denied",
        "python-trace-unresponsive",
        "rendezvous-timeout",
        "sagemaker-checkpoint-internal-error",
        "sagemaker-checkpoint-s3-uri-reuse",
        "sagemaker-insufficient-capacity",
        "sagemaker-resource-limit-exceeded",
        "slurm-job-stopped-triage",
        "slurm-log-error-search",
        "slurm-node-fail",
        "slurm-preempted",
        "slurm-time-limit",
        "smdebug-checkpointing-unsupported",
        "smp-checkpoint-stall-state-dict",
        "smp-debugger-checkpoint-uploading",
        "smp-network-timeout-processes-per-host",
        "smp-tf-input-order-convergence",
        "state-dict-unexpected-prefix",
        "torchrun-child-failed",
        "trcomp-convergence-distributed",
        "trcomp-convergence-single-gpu",
        "trcomp-no-speedup",
        "uneven-batches-stall-at-end",
        "xla-missing-gpu-num-devices",
    }
)

KINDS = frozenset({"line", "traceback", "log", "prose", "ja", "chat", "negative"})
KEYS = ("id", "text", "expected", "also_ok", "kind", "source")

MIN_CASES = 170
MIN_NEGATIVES = 50  # cases whose expected answer is silence (expected: null)
MIN_PROSE = 40  # kind prose + kind ja
MIN_JA = 10
LOG_LINES = (10, 150)
SOFT_MAX_PER_LABEL = 8  # warning above this
HARD_MAX_PER_LABEL = 10  # error above this

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
URL_RE = re.compile(r"https?://\S+")
JA_RE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def check_case(n: int, case: object, seen: set[str], kinds: frozenset[str] = KINDS) -> list[str]:
    """Return the problems found in one case (line number n); ``kinds``: the set's kinds (tests/fresh2 uses
    this function with its own)."""
    where = f"line {n}"
    if not isinstance(case, dict):
        return [f"{where}: not a JSON object"]
    problems = []
    missing = [k for k in KEYS if k not in case]
    extra = sorted(set(case) - set(KEYS))
    if missing:
        problems.append(f"{where}: missing keys {missing}")
    if extra:
        problems.append(f"{where}: unknown keys {extra}")
    if missing:
        return problems
    cid = case["id"]
    where = f"line {n} ({cid})"
    if not isinstance(cid, str) or not ID_RE.match(cid):
        problems.append(f"{where}: id is not kebab-case")
    elif cid in seen:
        problems.append(f"{where}: duplicate id")
    else:
        seen.add(cid)
    text = case["text"]
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}: empty text")
    expected = case["expected"]
    if expected is not None and expected not in LABELS:
        problems.append(f"{where}: unknown label {expected!r}")
    also_ok = case["also_ok"]
    if not isinstance(also_ok, list) or not all(isinstance(x, str) for x in also_ok):
        problems.append(f"{where}: also_ok must be a list of label ids")
    else:
        unknown = [x for x in also_ok if x not in LABELS]
        if unknown:
            problems.append(f"{where}: unknown also_ok labels {unknown}")
        if expected in also_ok:
            problems.append(f"{where}: also_ok repeats the expected label")
        if len(set(also_ok)) != len(also_ok):
            problems.append(f"{where}: also_ok has duplicates")
    kind = case["kind"]
    if kind not in kinds:
        problems.append(f"{where}: unknown kind {kind!r}")
    if kind == "negative" and expected is not None:
        problems.append(f"{where}: kind negative must have expected null")
    if kind == "ja" and isinstance(text, str) and not JA_RE.search(text):
        problems.append(f"{where}: kind ja but no Japanese text")
    if kind == "log" and isinstance(text, str):
        lines = len(text.splitlines())
        if not LOG_LINES[0] <= lines <= LOG_LINES[1]:
            problems.append(f"{where}: log has {lines} lines, expected {LOG_LINES[0]}-{LOG_LINES[1]}")
    source = case["source"]
    if not isinstance(source, str) or not URL_RE.search(source):
        problems.append(f"{where}: source has no URL")
    return problems


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("cases.jsonl")
    problems: list[str] = []
    cases: list[dict] = []
    seen: set[str] = set()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            case = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: invalid JSON ({exc})")
            continue
        found = check_case(n, case, seen)
        problems.extend(found)
        if not found:
            cases.append(case)

    kinds = Counter(c["kind"] for c in cases)
    labels = Counter(c["expected"] for c in cases)
    negatives = labels[None]
    prose = kinds["prose"] + kinds["ja"]

    print(f"{len(cases)} valid cases in {path}")
    print("per kind:")
    for kind in sorted(KINDS):
        print(f"  {kind:<10} {kinds[kind]:>4}")
    print(f"negatives (expected null): {negatives}")
    print(f"prose questions (prose + ja): {prose}, of which ja: {kinds['ja']}")
    print(f"labels covered: {len(set(labels) - {None})} of {len(LABELS)}")
    print("per label:")
    for label in sorted(LABELS):
        count = labels[label]
        flag = ""
        if count > HARD_MAX_PER_LABEL:
            problems.append(f"label {label}: {count} cases (more than {HARD_MAX_PER_LABEL})")
        elif count > SOFT_MAX_PER_LABEL:
            flag = "  (warning: above ~8)"
        print(f"  {label:<42} {count:>3}{flag}")
    uncovered = sorted(LABELS - set(labels))
    if uncovered:
        print("labels without a case: " + ", ".join(uncovered))

    minimums = (
        (len(cases), MIN_CASES, "cases"),
        (negatives, MIN_NEGATIVES, "negatives"),
        (prose, MIN_PROSE, "prose questions (prose + ja)"),
        (kinds["ja"], MIN_JA, "ja cases"),
    )
    for have, need, what in minimums:
        if have < need:
            problems.append(f"only {have} {what}, need at least {need}")

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
