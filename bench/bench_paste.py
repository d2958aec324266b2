"""A warm matcher answering 2 KB pastes with the ranking model at 1,000 entries, against a baseline checkout in
the same run. Prints JSON.

Target (issues #10 and #12): a 2 KB paste ≤ 5 ms median with the knowledge base at 1,000 entries, the model
on. ``bench_model.py`` times one paste (a traceback) and the model's share; this bench times what a user's
paste costs end to end on a warm matcher — :meth:`Matcher.diagnose` and the Slack answer rendered from it
(``render.slack.answer``) — for four kinds of 2 KB paste (a traceback, a question in prose, a log excerpt, a
question in Japanese), at 1,000 entries of both flavours: the bench's plain copies
(:func:`bench.bench_matcher.scaled_kb`: their texts repeat, so anything memoised per text looks free) and
distinct ones (:func:`bench.bench_cold_start.make_kb` with ``distinct=True``).

Each version runs in its own process (``<checkout>/.venv/bin/python`` of this file with ``--worker``), with its
own model cache (trained by its first run, loaded after); with ``--baseline DIR`` the two alternate, round by
round, so both meet the same load. A worker warms each paste once, then times the pastes in turn (``--calls``
each per round: wall and CPU medians). The report gives per paste and flavour the median over all calls of all
rounds, wall and CPU, the ratio to the baseline, and whether the two versions' answers are the same (each
answer's matches, scores, probabilities, evidence and rendered blocks, hashed).

Usage: .venv/bin/python bench/bench_paste.py [--baseline /work/base15] [--rounds 3] [--calls 100]
       [--flavours plain,distinct] [--entries 1000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_matcher import PASTE_2KB  # noqa: E402

SIZE = 2048  # bytes of UTF-8


def _cut(text: str, size: int = SIZE) -> str:
    """``text`` cut to at most ``size`` bytes of UTF-8 at a character boundary."""
    return text.encode("utf-8")[:size].decode("utf-8", errors="ignore")


_QUESTION = (
    "Hi everyone, I am fine-tuning a 13B model with FSDP on two nodes of eight A100s each and I keep running into "
    "a problem I cannot explain. The job starts fine, the first few hundred steps look normal, the loss goes "
    "down, and then somewhere between step 800 and step 1200 the whole thing just stops making progress. There "
    "is no error in the output at all, the GPUs show 100% utilisation in nvidia-smi but the step counter never "
    "moves again, and after about thirty minutes the job is killed by the scheduler because it hit the time "
    "limit. I tried lowering the batch size, I tried turning off activation checkpointing, and I tried pinning "
    "the NCCL version to the one that ships with the container, but nothing changed. One of my colleagues said "
    "that it might be a collective that one rank never joins, for example because a data loader worker died on "
    "one node or because one rank takes a different branch in the training loop when a batch is empty. How do "
    "I find out which rank is stuck and what it is waiting for? Is there a way to make NCCL or PyTorch tell me "
    "which operation timed out instead of hanging forever, and should I set a shorter timeout for the process "
    "group? I also noticed that the memory on one GPU is slightly higher than on the others before it hangs, "
    "not sure if that is related. We are on PyTorch 2.3, CUDA 12.1, and the nodes talk over InfiniBand. Any "
    "pointers on how to debug a distributed training job that hangs without an error message would be really "
    "appreciated, since every attempt costs us hours of cluster time and I would like to know what to look at "
    "first. Thanks a lot in advance for any help, and sorry for the long message. If it helps, I can share the "
    "launch script and the full output of one failed run; the last lines before the hang are always the same "
    "checkpoint message and then silence, and py-spy on the stuck process shows the main thread waiting in "
    "a collective while the other ranks have already moved on to the next step, as far as I can tell."
)

_LOG = "\n".join(
    [
        f"2026-11-20 03:{m:02d}:{s:02d} node{n:02d} [rank{r}]: iteration {1200 + i:>6} | loss 1.{(7 * i) % 97:04d} | lr 3.0e-4"
        for i, (m, s, n, r) in enumerate((k // 60 % 60, k % 60, k % 4, k % 32) for k in range(4000, 4020))
    ]
    + [
        "node02:41233:41987 [3] NCCL INFO Channel 05/0 : 19 -> 20 via P2P/IPC",
        "node02:41233:41987 [3] NCCL INFO Connected all rings",
        "[E ProcessGroupNCCL.cpp:523] [Rank 19] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for "
        "600070 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:543] To avoid data inconsistency, we are taking the entire process down.",
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [Rank 19] Watchdog caught collective operation timeout",
    ]
)

_JAPANESE = (
    "お疲れ様です。2ノード16GPUでLlamaのファインチューニングを回しているのですが、数百ステップ進んだところで毎回落ちてしまいます。"
    "エラーは下に貼ります。バッチサイズを半分にしても、gradient checkpointing を有効にしても同じところで止まります。"
    "nvidia-smi で見るとメモリはまだ余裕があるように見えるのですが、なぜかメモリ不足と言われます。"
    "断片化の問題なのか、それとも別のプロセスがGPUを掴んでいるのか、どこから調べればよいでしょうか。"
    "PYTORCH_CUDA_ALLOC_CONF を設定すると良いという話も聞いたのですが、具体的にどう設定すればいいのか教えてください。\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
    "79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use.\n"
    "よろしくお願いします。同じ現象に遭遇した方がいれば、どのように解決したか共有していただけると助かります。"
    "また、ジョブが落ちたあとに別のジョブを投げると、最初のステップからメモリ不足になることもあります。"
    "ノードを再起動すると直るので、前のジョブのプロセスが残っているのかもしれません。"
    "確認の方法があれば教えてください。"
)

PASTES = {
    "traceback": _cut(PASTE_2KB),
    "question": _cut(_QUESTION),
    "log": _cut(_LOG),
    "japanese": _cut(_JAPANESE * 2),
}


# ---- the worker: one version, one knowledge base --------------------------------------------------------
def _answer_digest(d, rendered) -> str:
    """A hash of what a user and the JSON view would see of a diagnosis (its matches, scores, probabilities,
    evidence, notes) and of the Slack answer's blocks."""
    shown = {"diagnosis": d.to_dict(), "rendered": getattr(rendered, "__dict__", repr(rendered))}
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def worker(flavour: str, knowledge: Path, entries: int, calls: int) -> dict:
    from tracebot.knowledge.loader import load_knowledge_base
    from tracebot.matcher import Matcher
    from tracebot.render import slack

    if flavour == "plain":
        from bench.bench_matcher import scaled_kb

        base, _ = load_knowledge_base(knowledge)
        kb = scaled_kb(base, entries)
    else:
        kb, _ = load_knowledge_base(knowledge)
    t = time.perf_counter()
    m = Matcher(kb, model=True)  # trained by the first run, from this version's cache after
    ready_s = time.perf_counter() - t

    def one(text: str):
        d = m.diagnose(text)
        return d, slack.answer(d, diagnosis_id=1, always_answer=True)

    out: dict = {"entries": len(kb.entries), "ready_s": round(ready_s, 2), "pastes": {}}
    for name, text in PASTES.items():
        d, rendered = one(text)  # warms what the first paste of its kind fills
        out["pastes"][name] = {"first": d.best.entry_id if d.best else None, "digest": _answer_digest(d, rendered),
                               "wall_ms": [], "cpu_ms": []}
    for _ in range(calls):
        for name, text in PASTES.items():  # in turn: a burst of other work falls on every paste alike
            t, c = time.perf_counter(), time.process_time()
            one(text)
            out["pastes"][name]["cpu_ms"].append((time.process_time() - c) * 1000)
            out["pastes"][name]["wall_ms"].append((time.perf_counter() - t) * 1000)
    return out


# ---- the parent: versions alternating -------------------------------------------------------------------
def _run_worker(repo: Path, cache: Path, flavour: str, knowledge: Path, entries: int, calls: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRACEBOT_MODEL"}
    env["TRACEBOT_CACHE"] = str(cache)
    argv = [str(repo / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--worker", flavour,
            "--knowledge", str(knowledge), "--entries", str(entries), "--calls", str(calls)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode:
        raise SystemExit(f"worker for {repo} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _ms(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, help="a checkout with its own .venv, run alternately with this one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=100, help="timed calls of each paste per round")
    ap.add_argument("--flavours", default="plain,distinct")
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--knowledge", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.knowledge, args.entries, args.calls)))
        return

    tmp = Path(tempfile.mkdtemp(prefix="tracebot-bench-paste-"))
    try:
        versions = {"now": REPO} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        report: dict = {"bench": "paste", "entries": args.entries, "rounds": args.rounds, "calls": args.calls,
                        "paste_bytes": {k: len(v.encode()) for k, v in PASTES.items()},
                        "load_average": {"before": [round(x, 2) for x in os.getloadavg()]},
                        "statistic": "median over every call of every round (each call: diagnose + Slack answer)"}
        if args.baseline:
            report["baseline"] = {"repo": str(args.baseline), "commit": subprocess.run(
                ["git", "-C", str(args.baseline), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                check=False, timeout=30).stdout.strip()}
        for flavour in args.flavours.split(","):
            knowledge = REPO / "knowledge"
            if flavour == "distinct":
                from bench.bench_cold_start import make_kb

                knowledge = tmp / "knowledge-distinct"
                make_kb(knowledge, args.entries, distinct=True)
            runs: dict[str, list[dict]] = {v: [] for v in versions}
            for _ in range(args.rounds):
                for vname, repo in versions.items():
                    runs[vname].append(_run_worker(repo, tmp / f"cache-{vname}", flavour, knowledge, args.entries,
                                                   args.calls))
            rows: dict = {}
            for name in PASTES:
                row: dict = {}
                for vname in versions:
                    wall = [x for r in runs[vname] for x in r["pastes"][name]["wall_ms"]]
                    cpu = [x for r in runs[vname] for x in r["pastes"][name]["cpu_ms"]]
                    first = runs[vname][0]["pastes"][name]
                    row[vname] = {"wall_ms": _ms(wall), "cpu_ms": _ms(cpu),
                                  "round_wall_ms": [_ms(r["pastes"][name]["wall_ms"]) for r in runs[vname]],
                                  "first": first["first"], "digest": first["digest"]}
                if "baseline" in versions:
                    row["ratio_wall"] = round(row["now"]["wall_ms"] / row["baseline"]["wall_ms"], 3)
                    row["ratio_cpu"] = round(row["now"]["cpu_ms"] / row["baseline"]["cpu_ms"], 3)
                    row["same_answer"] = row["now"]["digest"] == row["baseline"]["digest"]
                row["le_5ms"] = row["now"]["wall_ms"] <= 5
                rows[name] = row
            report[flavour] = {"ready_s": {v: [r["ready_s"] for r in runs[v]] for v in versions}, "pastes": rows}
            print(json.dumps({flavour: rows}), file=sys.stderr, flush=True)
        report["load_average"]["after"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
