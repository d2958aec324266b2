"""A 12-rank hang trace as Slack gets it: a summary under 4,000 characters in the thread, every stack
once in the attached file. Built from real py-spy dumps (tests/fixtures/slurm) through the SLURM plugin's
report, without a cluster."""

from __future__ import annotations

from pathlib import Path

from tracebot.plugin_api import Caller, CommandContext
from tracebot.plugins.pyspy.dump import parse_dump_json
from tracebot.plugins.slurm.hang import HangTrace
from tracebot.plugins.slurm.jobinfo import JobView
from tracebot.plugins.slurm.report import add_hang_trace, running
from tracebot.render.blocks_text import blocks_to_text
from tracebot.service import posting

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"
ONLY_IN_THE_COLLECTIVE = "_exception_logger.<locals>.wrapper ("  # a frame of the 11 waiting ranks' stack
IN_BOTH_STACKS = "hang_train.py:46)"  # the outermost frame, in both groups' stacks


class Recorder:
    def __init__(self) -> None:
        self.posts: list[tuple[str, list]] = []
        self.files: dict[str, bytes] = {}

    def post(self, channel, text, blocks=None, thread_ts=None):  # noqa: ANN001, ANN201
        self.posts.append((text, blocks or []))
        return f"1.{len(self.posts):06d}"

    def upload(self, channel, thread_ts, filename, content, title):  # noqa: ANN001, ANN201
        self.files[filename] = content


def twelve_rank_hang(matcher) -> object:  # noqa: ANN001
    stuck = parse_dump_json((FIX / "pyspy_dump_rank0_all_reduce.json").read_text(), 7905).frames
    odd = parse_dump_json((FIX / "pyspy_dump_rank1_load_next_batch.json").read_text()).frames
    trace = HangTrace(dumps={str(r): odd if r == 7 else stuck for r in range(12)},
                      hosts={str(r): f"gpu-node-{r // 4 + 1}" for r in range(12)},
                      pids={str(r): 1000 + r for r in range(12)}, seconds=2.3)
    job = JobView(asked="4242", job_id="4242", display_id="4242", name="llm-pretrain", state="RUNNING",
                  nodelist="gpu-node-[1-3]", elapsed="01:02:03", time_limit="1-00:00:00", partition="gpu")
    ctx = CommandContext(caller=Caller("U0ALICE", "alice", False), matcher=matcher)
    return add_hang_trace(running(job, ["gpu-node-1", "gpu-node-2", "gpu-node-3"]), ctx, job, trace)


def test_a_12_rank_hang_is_a_short_summary_in_the_thread_and_each_stack_once_in_the_file(matcher):
    outbox = Recorder()
    posting.post_result(outbox, "C0TRAIN", "1.000000", twelve_rank_hang(matcher))
    (text, blocks), = outbox.posts
    shown = blocks_to_text(blocks, text)
    print(f"12-rank summary: {len(shown)} characters in {len(blocks)} blocks")
    assert len(shown) < 4000 and len(text) < 4000
    assert shown.count("ranks 0–6, 8–11 (11) in `all_reduce (distributed_c10d.py:3252)`") == 1
    assert shown.count("odd one out · rank 7 (1) in `load_next_batch (hang_train.py:20)`") == 1
    assert ONLY_IN_THE_COLLECTIVE not in shown
    full = outbox.files[posting.RESULT_FILE].decode()
    assert full.count(ONLY_IN_THE_COLLECTIVE) == 1 and full.count(IN_BOTH_STACKS) == 2
    assert "job-4242-ranks.png" in outbox.files
