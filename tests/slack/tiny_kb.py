"""A two-entry knowledge base written into a temp dir: tests of the Slack layer depend on these known
entries, not on the content of the bundled ``knowledge/``."""

from __future__ import annotations

from pathlib import Path

OOM_LINE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity of 79.15 GiB"
NCCL_LINE = "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE) ran for 600034 milliseconds before timing out."

ENTRIES = {
    "cuda/test-cuda-oom.yaml": """
id: test-cuda-oom
title: "Test: CUDA out of memory"
summary: "A rank asked the GPU for more memory than was free."
role: root-cause
priority: 75
tags: [cuda, memory]
recognise:
  anchors: ["CUDA out of memory"]
  regex: ['torch\\.(cuda\\.)?OutOfMemoryError']
cause: "The step needs more memory than the device has free."
fix:
  - "Lower the per-GPU micro-batch size."
  - "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` for fragmentation."
trace: ["/trace job <jobid>"]
sources:
  - url: "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"
examples:
  match:
    - "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."
  no_match:
    - "memory usage is fine"
ja:
  title: "テスト: CUDA のメモリ不足"
  summary: "GPU の空きより多くのメモリを要求しました。"
  fix:
    - "GPU ごとのマイクロバッチを下げます。"
    - "断片化には `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` を設定します。"
""",
    "nccl/test-nccl-watchdog.yaml": """
id: test-nccl-watchdog
title: "Test: NCCL watchdog timeout"
summary: "A collective did not finish within the process group timeout."
role: symptom
priority: 40
tags: [nccl, hang]
recognise:
  anchors: ["Watchdog caught collective operation timeout"]
cause: "Some rank never joined the collective; the others waited until the timeout."
fix:
  - "Find the rank that did not reach the collective: `/trace job <jobid>`."
trace: ["/trace job <jobid>"]
sources:
  - url: "https://pytorch.org/docs/stable/distributed.html"
examples:
  match:
    - "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out."
  no_match:
    - "NCCL INFO Bootstrap"
""",
}


def write_tiny_kb(root: Path) -> Path:
    for rel, text in ENTRIES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    return root
