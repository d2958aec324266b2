"""No entry example is a copy of an evaluation case.

An example that shares most of its text with a case of the corpus, the holdout or a fresh set makes
the ranking model (trained on examples) answer that case from memory, and the figures stop measuring
how the knowledge base generalises. Cases and examples are compared whitespace-collapsed and
lower-cased. One-line texts are exempt, as in ``tests/corpus/test_corpus_integrity.py``: a fixed
message (``Default process group has not been initialized …``) reads the same in every paste.
Failures name the entry and the case, never the text, so the fresh sets stay unread.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from tracebot.knowledge.loader import load_knowledge_base

ROOT = Path(__file__).resolve().parents[2]
CASE_FILES = [ROOT / "tests" / d / "cases.jsonl" for d in ("corpus", "holdout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10")]
MIN_CHARS = 80
MOST = 80.0
# Overlaps found when this test was written: the entry and the case quote the same public issue. Each
# example should be replaced by another real occurrence of its error (then its line here deleted); the
# model is trained on these, so the cases named here measure memory, not generalisation. New overlaps fail.
KNOWN = frozenset(
    [
        "cuda-device-side-assert examples.match[3] ~ corpus/dsa-line-flowtron",
        "cuda-no-kernel-image examples.match[1] ~ corpus/nokernel-sm86",
        "py-spy-permission-denied examples.match[1] ~ holdout/pyspy-perm-docker-hint",
        "py-spy-permission-denied examples.match[1] ~ fresh/pyspy-459-docker-warning",
        "py-spy-permission-denied examples.match[2] ~ holdout/pyspy-perm-docker-hint",
        "py-spy-permission-denied examples.match[2] ~ fresh/pyspy-459-docker-warning",
        "host-oom-killed examples.match[1] ~ corpus/hostoom-slurmstepd-cgroup",
        "nccl-invalid-usage-duplicate-gpu examples.match[0] ~ corpus/dupgpu-verl-161",
        "nccl-invalid-usage-duplicate-gpu examples.match[0] ~ corpus/dupgpu-megatron-interleaved",
        "nccl-invalid-usage-duplicate-gpu examples.match[0] ~ holdout/dup-gpu-megatron-barrier",
        "nccl-invalid-usage-duplicate-gpu examples.match[0] ~ fresh/verl-161-duplicate-gpu",
        "nccl-remote-error examples.match[0] ~ corpus/remote-error-nccl-2076",
        "nccl-remote-error examples.match[0] ~ holdout/remote-error-connection-reset",
        "nccl-remote-error examples.match[0] ~ fresh/nccl-2076-reset-by-peer",
        "nccl-system-error-gpu-memory examples.match[0] ~ corpus/syserr-segmenter-278",
        "nccl-system-error-gpu-memory examples.match[1] ~ corpus/variant-iso-ts-host-rank-syserr",
        "nccl-unhandled-cuda-error examples.match[0] ~ holdout/unhandled-cuda-rank7-invalid-arg",
        "nccl-unhandled-cuda-error examples.match[0] ~ fresh/nccl-1410-invalid-argument",
        "ddp-unused-parameters examples.match[0] ~ corpus/unused-params-ranked-newer",
        "ddp-unused-parameters examples.match[0] ~ fresh7/openclip-lock-image-unused-params",
        "disk-full-on-save examples.match[0] ~ holdout/disk-full-stream-writer",
        "master-port-in-use examples.match[1] ~ holdout/port-in-use-rdzv-29400-warn",
        "master-port-in-use examples.match[1] ~ fresh/mmpretrain-960-bind-port-22",
        "rendezvous-timeout examples.match[7] ~ holdout/rdzv-client-socket-timeout",
        "torchrun-child-failed examples.match[0] ~ corpus/childfailed-exitcode1-no-cause",
        "slurm-job-stopped-triage examples.match[0] ~ corpus/healthy-sacct-completed",
        "slurm-node-fail examples.match[1] ~ corpus/nodefail-sacct",
        "slurm-time-limit examples.match[0] ~ corpus/timelimit-zetta",
        "slurm-time-limit examples.match[0] ~ holdout/slurm-time-limit-job-and-step",
        "slurm-time-limit examples.match[0] ~ fresh/zetta-671-time-limit-steps",
    ]
) | frozenset(
    # Not copies: another public issue printing the same library message (its source is not among the
    # entry's); the example and the case are two real occurrences of one standard error text.
    [
        "nccl-invalid-usage-duplicate-gpu examples.match[0] ~ fresh4/atmorep-dup-gpu-sbatch",
        "collective-mismatch examples.match[5] ~ fresh4/msswift10183-broadcast-mismatch",
        "disk-full-on-save examples.match[0] ~ fresh5/f5-tts-streamwriter-data-pkl-rank0",
        "ddp-unused-parameters examples.match[0] ~ fresh9/retinexformer-multi-gpu-unused-params-zh",
        "disk-full-on-save examples.match[0] ~ fresh10/pytorch-windows-streamwriter-data1",  # pytorch/pytorch#121833
    ]
)  # rapidfuzz ratio (normalised edit similarity over the whole of both texts)


def _pasted(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.strip()) >= 2 and len(text) >= MIN_CHARS


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _cases(keep=_pasted) -> list[tuple[str, str]]:
    """(set/id, normalised text) of every case whose text ``keep`` accepts (default: pasted ones)."""
    out = []
    for path in CASE_FILES:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("text") and keep(case["text"]):
                    out.append((f"{path.parent.name}/{case['id']}", _norm(case["text"])))
    return out


def test_no_entry_example_shares_most_of_its_text_with_an_evaluation_case():
    kb, _ = load_knowledge_base(ROOT / "knowledge")
    examples = [
        (f"{e.id} examples.{kind}[{i}]", _norm(x))
        for e in kb.entries
        # todo_match too: a known gap is promoted to match once the matcher gets it
        for kind, texts in (("match", e.examples_match), ("no_match", e.examples_no_match), ("todo_match", e.examples_todo))
        for i, x in enumerate(texts)
        if _pasted(x)
    ]
    cases = _cases()
    scores = cdist([x for _, x in examples], [c for _, c in cases], scorer=fuzz.ratio, score_cutoff=MOST, workers=1)
    shared = [
        f"{examples[i][0]} ~ {cases[j][0]} ({scores[i, j]:.0f})"
        for i, j in zip(*scores.nonzero(), strict=True)
        if f"{examples[i][0]} ~ {cases[j][0]}" not in KNOWN
    ]
    assert not shared, "entry examples copied from evaluation cases:\n" + "\n".join(shared)


# Silence texts (knowledge/silence.yaml) train the model as "no entry answers this", so a copied case would
# be answered from memory too. Every text of a case counts here (a short reply is what silence texts are
# made of): a silence text must not share most of its text with a case (ratio), and a longer one must not
# sit inside a case's text (partial ratio). Shorter texts than SILENCE_MIN_CHARS ("thanks!", "+1") read the
# same in every thread and are exempt.
SILENCE_MIN_CHARS = 12
SILENCE_INSIDE_CHARS = 40
INSIDE = 95.0


def test_no_silence_text_is_copied_from_an_evaluation_case():
    kb, _ = load_knowledge_base(ROOT / "knowledge")
    texts = [(f"silence.yaml:{s.line}", _norm(s.text)) for s in kb.silence if len(_norm(s.text)) >= SILENCE_MIN_CHARS]
    assert texts, "no silence texts to compare"
    cases = _cases(keep=lambda text: True)
    same = cdist([t for _, t in texts], [c for _, c in cases], scorer=fuzz.ratio, score_cutoff=MOST, workers=1)
    shared = {(i, j): same[i, j] for i, j in zip(*same.nonzero(), strict=True)}
    longer = [i for i, (_, t) in enumerate(texts) if len(t) >= SILENCE_INSIDE_CHARS]
    inside = cdist([texts[i][1] for i in longer], [c for _, c in cases], scorer=fuzz.partial_ratio,
                   score_cutoff=INSIDE, workers=1)
    for a, j in zip(*inside.nonzero(), strict=True):
        if len(texts[longer[a]][1]) <= len(cases[j][1]):  # the silence text inside the case, not the other way
            shared[(longer[a], j)] = inside[a, j]
    found = [f"{texts[i][0]} ~ {cases[j][0]} ({score:.0f})" for (i, j), score in sorted(shared.items())]
    assert not found, "silence texts copied from evaluation cases:\n" + "\n".join(found)
