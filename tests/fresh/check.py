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
from collections.abc import Callable
from dataclasses import dataclass, field
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

LOG_LINES = (10, 150)


@dataclass(frozen=True)
class Rules:
    """What one blind set must hold beyond each case's shape (tests/fresh2 and tests/fresh3 have their own)."""

    kinds: frozenset[str]
    min_cases: int
    min_negatives: int  # cases whose expected answer is silence (expected: null)
    at_least: tuple[tuple[tuple[str, ...], int], ...]  # (kinds, how many cases of them at least)
    soft_max_per_label: int  # warning above this
    hard_max_per_label: int  # error above this
    max_per_source: int | None = None
    min_null_share: float = 0.0  # of the valid cases, expecting silence
    # keys a case may carry beyond KEYS, each a non-empty string (a label's reason, say)
    optional_keys: frozenset[str] = field(default_factory=frozenset)
    # what counts as one source for max_per_source (default: the source's last word, "/" stripped)
    thread: Callable[[str], str] = lambda source: source.split(" ")[-1].rstrip("/")
    # the set's own rules for a valid case's source: the problems found (none: fine)
    source_problems: Callable[[dict], list[str]] = lambda case: []


RULES = Rules(KINDS, min_cases=170, min_negatives=50, at_least=((("prose", "ja"), 40), (("ja",), 10)),
              soft_max_per_label=8, hard_max_per_label=10)

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
URL_RE = re.compile(r"https?://\S+")
JA_RE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def check_case(n: int, case: object, seen: set[str], kinds: frozenset[str] = KINDS) -> list[str]:
    """Return the problems found in one case (line number n); ``kinds``: the set's kinds."""
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


def validate(path: Path, rules: Rules = RULES) -> int:
    """Check every case of ``path`` and the set against ``rules``; print the counts. 0 when all is well."""
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
        if isinstance(case, dict):
            for key in rules.optional_keys & case.keys():
                if not isinstance(case[key], str) or not case[key].strip():
                    problems.append(f"line {n}: {key} must be a non-empty string")
            case = {k: v for k, v in case.items() if k not in rules.optional_keys}
        found = check_case(n, case, seen, rules.kinds)
        problems.extend(found)
        if not found:
            problems.extend(f"line {n} ({case['id']}): {p}" for p in rules.source_problems(case))
            cases.append(case)

    kinds = Counter(c["kind"] for c in cases)
    labels = Counter(c["expected"] for c in cases)
    negatives = labels[None]
    sources = Counter(rules.thread(c["source"]) for c in cases)
    if rules.max_per_source is not None:
        for src, count in sources.items():
            if count > rules.max_per_source:
                problems.append(f"source used {count} times (max {rules.max_per_source}): {src}")

    print(f"{len(cases)} valid cases in {path}")
    print("per kind:")
    for kind in sorted(rules.kinds):
        print(f"  {kind:<10} {kinds[kind]:>4}")
    print(f"negatives (expected null): {negatives}")
    print(f"prose questions (prose + ja): {kinds['prose'] + kinds['ja']}, of which ja: {kinds['ja']}")
    print(f"distinct sources: {len(sources)}")
    print(f"labels covered: {len(set(labels) - {None})} of {len(LABELS)}")
    print("per label:")
    for label in sorted(LABELS):
        count = labels[label]
        flag = ""
        if count > rules.hard_max_per_label:
            problems.append(f"label {label}: {count} cases (more than {rules.hard_max_per_label})")
        elif count > rules.soft_max_per_label:
            flag = f"  (warning: above ~{rules.soft_max_per_label})"
        print(f"  {label:<42} {count:>3}{flag}")
    uncovered = sorted(LABELS - set(labels))
    if uncovered:
        print("labels without a case: " + ", ".join(uncovered))

    minimums = [(len(cases), rules.min_cases, "cases"), (negatives, rules.min_negatives, "negatives")]
    minimums += [(sum(kinds[k] for k in ks), need, f"{' + '.join(ks)} cases") for ks, need in rules.at_least]
    for have, need, what in minimums:
        if have < need:
            problems.append(f"only {have} {what}, need at least {need}")
    share = negatives / len(cases) if cases else 0.0
    if share < rules.min_null_share:
        problems.append(f"only {share:.0%} expected null, need at least {rules.min_null_share:.0%}")

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nOK")
    return 0


def main(argv: list[str], rules: Rules = RULES, here: Path = Path(__file__).parent) -> int:
    return validate(Path(argv[1]) if len(argv) > 1 else here / "cases.jsonl", rules)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
