"""Log triage as a user meets it: what failed first, where, whether the knowledge base knows it, what
followed, and which ranks went quiet; in `diagnose --json`, the terminal and the Slack answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.triage.make_logs import Scenario, scenarios, two_root_causes
from tracebot.cli import main
from tracebot.matcher import Matcher, combine, load_matcher
from tracebot.render import slack as render
from tracebot.render.text import render_diagnosis

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = scenarios()


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    _kb, matcher, errors = load_matcher(REPO / "knowledge")
    assert not errors
    return matcher


def test_the_generated_logs_cover_what_the_issue_asks_for():
    assert len(SCENARIOS) >= 25
    assert sum(s.entry is None for s in SCENARIOS) >= 8  # first failure not in the knowledge base
    assert sum(bool(s.silent) for s in SCENARIOS) >= 5
    # concatenated node by node: cascade lines come before the failure that caused them
    assert sum(any("Watchdog caught" in line for line in s.lines[: s.first_line - 1]) for s in SCENARIOS) >= 3
    assert min(len(s.lines) for s in SCENARIOS) >= 300


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_first_failure_its_entry_and_the_silent_ranks_are_named(matcher: Matcher, scenario: Scenario):
    d = matcher.diagnose(scenario.text)
    assert d.first_failure is not None
    assert (d.first_failure.line_no, d.first_failure.entry_id) == (scenario.first_line, scenario.entry)
    assert d.silent_ranks == scenario.silent
    assert d.worth_posting  # a whole job went down: worth saying so even when no entry knows the bug
    if scenario.entry is not None and not scenario.silent:
        assert d.matches[0].entry_id == scenario.entry  # the root cause before the watchdog cascade


def test_a_user_code_failure_names_the_frame_in_the_users_code(matcher: Matcher):
    s = next(s for s in SCENARIOS if s.name == "user-keyerror-collate")
    ff = matcher.diagnose(s.text).first_failure
    assert ff is not None and ff.exception == "KeyError" and ff.message == "'labels'"
    assert ff.frame == "data.py:44 in collate" and ff.rank == "3" and ff.host == "gpu-01"


def test_a_single_user_traceback_with_no_cascade_stays_silent(matcher: Matcher):
    text = "\n".join([
        "Traceback (most recent call last):",
        '  File "/home/alice/train.py", line 12, in <module>',
        "    main()",
        "KeyError: 'labels'",
    ])
    d = matcher.diagnose(text)
    assert d.first_failure is not None and d.first_failure.entry_id is None
    assert not d.cascade and not d.worth_posting


def test_a_watchdog_only_log_names_the_rank_that_printed_nothing_and_its_host(matcher: Matcher):
    s = next(s for s in SCENARIOS if s.name == "hang-silent-7")
    d = matcher.diagnose(s.text)
    assert d.first_failure is not None and d.first_failure.cascade
    assert d.silent_ranks == ["7"] and d.silent_hosts == {"7": "gpu-02"}
    assert d.cascade == "15 watchdog timeouts on 15 ranks"


def test_ranks_behind_in_the_same_collective_are_named(matcher: Matcher):
    lines = [
        f"[rank{r}]:[E501 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 "
        "milliseconds before timing out."
        for r, seq in ((0, 512), (1, 512), (2, 511), (3, 512))
    ]
    assert matcher.diagnose("\n".join(lines)).lagging_ranks == ["2"]


def test_srun_step_abort_alone_is_not_a_time_limit(matcher: Matcher):
    text = "\n".join([
        "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "srun: error: gpu-07: task 3: Exited with exit code 1",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "slurmstepd: error: *** STEP 4411.0 ON gpu-07 CANCELLED AT 2024-05-01T10:12:00 ***",
    ])
    ids = [m.entry_id for m in matcher.diagnose(text).matches]
    assert "slurm-time-limit" not in ids and ids[0] == "cuda-illegal-memory-access"


def test_terminal_and_slack_lead_with_the_first_failure_then_entries_then_cascade(matcher: Matcher):
    s = next(s for s in SCENARIOS if s.name == "user-shape-mismatch")
    d = matcher.diagnose(s.text)
    text = render_diagnosis(d)
    assert text.startswith(f"First failure: line {s.first_line} (rank 4")
    assert "mat1 and mat2 shapes cannot be multiplied" in text.split("\n\n")[0]
    assert text.index("First failure") < text.index("[nccl-watchdog-timeout]") < text.index("After the first failure")
    rendered = render.answer(d, diagnosis_id=None, always_answer=False)
    assert rendered is not None  # posted unprompted: the job died of a bug no entry knows
    fallback, blocks = rendered
    first_block = blocks[0]["text"]["text"]
    assert first_block.startswith("*First failure*") and "mat1 and mat2" in first_block
    assert "Not a known problem" in first_block and fallback.startswith("First failure:")
    assert blocks[-1]["type"] == "context" and "After the first failure" in blocks[-1]["elements"][0]["text"]


def test_diagnose_json_carries_first_failure_and_silent_ranks(tmp_path: Path):
    s = next(s for s in SCENARIOS if s.name == "hang-silent-3-9")
    log = tmp_path / "job.out"
    log.write_text(s.text)
    out = subprocess.run([sys.executable, "-m", "tracebot.cli", "diagnose", str(log), "--json"],
                         capture_output=True, text=True, timeout=120, cwd=REPO, check=True)
    doc = json.loads(out.stdout)
    assert doc["silent_ranks"] == ["3", "9"]
    assert doc["first_failure"]["line_no"] == s.first_line and doc["first_failure"]["entry_id"] == "nccl-watchdog-timeout"


def test_an_attached_log_in_a_channel_is_answered_leading_with_its_first_failure(tmp_path: Path):
    import io

    from tracebot.config import Config
    from tracebot.console import ConsoleOutbox
    from tracebot.render.blocks_text import blocks_to_text
    from tracebot.service.build import build_service
    from tracebot.service.inbound import FileRef, Inbound
    from tracebot.service.plugin_host import PluginHost
    from tracebot.store import Store

    s = next(s for s in SCENARIOS if s.name == "user-keyerror-collate")
    log = tmp_path / "job.log"
    log.write_text(s.text)
    config = Config(db_path=tmp_path / "t.sqlite3")
    outbox = ConsoleOutbox(io.StringIO())
    service = build_service(config, outbox, store=Store(config.db_path),
                            host=PluginHost(builtins=(), entry_points=False))
    try:
        msg = Inbound(channel="C0TRIAGE", user="U1", ts="1700000000.000001", text="our 16-rank job died",
                      files=[FileRef("job.log", str(log), log.stat().st_size, "text/plain", "text")])
        assert service.on_message(msg)
        assert service.wait_idle(60)
    finally:
        service.shutdown(wait=False)
    answer = blocks_to_text(outbox.posted[-1].blocks)
    assert answer.startswith("*First failure* · line") and "KeyError: 'labels'" in answer
    assert "in `data.py:44 in collate`" in answer and "Not a known problem" in answer


@pytest.mark.parametrize("scenario", two_root_causes(), ids=lambda s: s.name)
def test_the_earliest_root_cause_is_ranked_first_whatever_the_line_order(matcher: Matcher, scenario: Scenario):
    d = matcher.diagnose(scenario.text)
    assert d.first_failure is not None
    assert (d.first_failure.line_no, d.first_failure.entry_id) == (scenario.first_line, scenario.entry)
    assert d.matches[0].entry_id == scenario.entry
    assert d.matches[0].role == "root-cause"  # the watchdog cascade never comes first


def test_a_streamed_log_still_names_the_user_frame_of_its_first_failure(matcher: Matcher, tmp_path: Path):
    # Large enough to be read as a stream of candidate lines; ranks interleave their tracebacks.
    noise = "".join(f"[rank{r % 8}]: iteration {r:7d} | lm loss 2.731E+00 | grad norm 0.91\n" for r in range(8000))
    tb = ("[rank3]: Traceback (most recent call last):\n"
          "[rank5]: Traceback (most recent call last):\n"
          '[rank3]:   File "/home/alice/llm/train.py", line 187, in main\n'
          '[rank5]:   File "/home/alice/llm/train.py", line 190, in main\n'
          '[rank3]:   File "/home/alice/llm/data.py", line 44, in collate\n'
          '[rank3]:   File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 631, in __next__\n'
          '[rank5]:   File "/home/alice/llm/eval.py", line 9, in score\n'
          "[rank3]: KeyError: 'labels'\n"
          "[rank5]: ZeroDivisionError: division by zero\n")
    log = tmp_path / "job.log"
    log.write_text(noise + tb + noise)
    assert log.stat().st_size > 256 * 1024
    ff = matcher.diagnose_file(log).first_failure
    assert ff is not None and (ff.rank, ff.exception, ff.frame) == ("3", "KeyError", "data.py:44 in collate")


def test_the_world_is_the_largest_group_and_a_rank_that_only_noticed_the_timeout_reported(matcher: Matcher):
    # torchrun's rendezvous result (per-node and global sizes), a tensor-parallel communicator of 8 first,
    # then the world's; ranks print PyTorch 2.4's watchdog lines with no prefix of their own.
    lines = ["INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
             "  group_world_size=2", "  local_world_size=8", "  role_world_size=16", "  global_world_size=16"]
    lines += [f"gpu-0{r // 8 + 1}:{4000 + r}:{4100 + r} [{r % 8}] NCCL INFO comm 0x55d{r:04x} rank {r % 8} "
              f"nranks 8 cudaDev {r % 8} busId {r % 8}0000 commId 0x8f3a - Init COMPLETE" for r in range(16)]
    for r in range(16):
        if r == 13:
            continue  # printed nothing
        if r != 11:
            lines.append(f"[E501 ProcessGroupNCCL.cpp:607] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Watchdog caught "
                         "collective operation timeout: WorkNCCL(SeqNum=90211, OpType=ALLREDUCE, NumelIn=1, "
                         "NumelOut=1, Timeout(ms)=600000) ran for 600043 milliseconds before timing out.")
        lines.append(f"[E501 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either "
                     "an error or timeout) detected by watchdog at work: 90211, last enqueued NCCL work: 90211, "
                     "last completed NCCL work: 90210.")
    d = matcher.diagnose("\n".join(lines))
    assert d.silent_ranks == ["13"] and d.silent_hosts == {}
    assert d.cascade == "14 watchdog timeouts on 14 ranks"


def _watchdog(r: int) -> str:
    return (f"[rank{r}]:[E501 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=90211, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 "
            "milliseconds before timing out.")


def test_with_no_world_size_stated_a_rank_missing_among_the_others_is_named(matcher: Matcher):
    d = matcher.diagnose("\n".join(_watchdog(r) for r in range(16) if r != 6))
    assert d.silent_ranks == ["6"]


def test_a_log_of_one_node_of_several_does_not_call_the_other_nodes_silent(matcher: Matcher):
    d = matcher.diagnose("\n".join(_watchdog(r) for r in range(8, 16)))
    assert d.silent_ranks == []


def test_a_cuda_error_the_watchdog_reports_is_that_ranks_failure_not_cascade(matcher: Matcher):
    lines = [_watchdog(r) for r in range(4) if r != 2]
    lines.insert(1, "[rank2]:[E501 ProcessGroupNCCL.cpp:1537] [PG 0 Rank 2] Process group watchdog thread terminated "
                    "with exception: CUDA error: an illegal memory access was encountered")
    d = matcher.diagnose("\n".join(lines))
    assert d.first_failure is not None and not d.first_failure.cascade
    assert (d.first_failure.line_no, d.first_failure.rank, d.first_failure.entry_id) == (2, "2", "cuda-illegal-memory-access")
    assert d.matches[0].entry_id == "cuda-illegal-memory-access"


def test_the_earliest_failure_names_its_entry_though_the_entry_fired_on_many_lines_before_it(matcher: Matcher):
    # 30 ranks ran out of memory; per-node logs appended latest first, so the earliest is the last line
    lines = [f"[2024-05-01 10:{59 - r:02d}:00] gpu-{r:02d}: [rank{r}]: torch.OutOfMemoryError: CUDA out of memory. "
             f"Tried to allocate 2.00 GiB. GPU {r % 8} has a total capacity of 79.15 GiB of which 1.02 GiB is free."
             for r in range(30)]
    lines += [f"[2024-05-01 11:10:00] gpu-40: {_watchdog(40 + r)}" for r in range(4)]
    d = matcher.diagnose("\n".join(lines))
    assert d.first_failure is not None and (d.first_failure.line_no, d.first_failure.entry_id) == (30, "cuda-oom")


def test_a_watchdog_only_log_starts_at_the_first_timeout_not_at_the_abort_it_causes(matcher: Matcher):
    # PyTorch 1.9's watchdog line names no SeqNum; each rank then aborts through c10::DistBackendError.
    lines = ["NCCL INFO comm 0x55d0 rank 0 nranks 8 cudaDev 0 busId 10000 - Init COMPLETE"]
    for r in range(8):
        if r == 5:
            continue
        lines += [f"[rank{r}]: terminate called after throwing an instance of 'c10::DistBackendError'",
                  f"[rank{r}]:   what():  [Rank {r}] Watchdog caught collective operation timeout: "
                  "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800506 milliseconds before timing out."]
    d = matcher.diagnose("\n".join(lines))
    assert d.first_failure is not None and d.first_failure.cascade and d.first_failure.line_no == 2
    assert d.silent_ranks == ["5"]


def test_line_numbers_count_newlines_only_as_a_log_viewer_does(matcher: Matcher):
    # tqdm redraws its bar with carriage returns; a line that starts with one is still one line
    lines = [f"[rank{r}]: step {s} loss 2.1" for s in range(3) for r in range(4)]
    lines.append("\r  0%|          | 0/801 [00:00<?, ?it/s]\r  1%|          | 8/801 [00:08<?, ?it/s]")
    lines += ["[rank2]: Traceback (most recent call last):",
              '[rank2]:   File "/home/alice/llm/train.py", line 88, in main',
              "[rank2]: ValueError: too many values to unpack (expected 2)"]
    lines += [_watchdog(r) for r in (0, 1, 3)]
    d = matcher.diagnose("\r\n".join(lines) + "\r\n")
    assert d.first_failure is not None
    assert d.first_failure.line_no == 16 and d.first_failure.exception == "ValueError"


def _progress_lines(n: int) -> list[str]:
    return [f"[rank{r % 4}]: iteration {i:6d} | lm loss 2.731E+00 | grad norm 0.91" for i, r in enumerate(range(n))]


def test_a_root_cause_that_shows_only_after_an_unknown_first_failure_is_not_posted_ahead_of_it(matcher: Matcher):
    # the job is torn down after the bug: the shell reports its python killed, which reads like the OOM killer
    lines = [*_progress_lines(120), "Traceback (most recent call last):",
             '  File "/home/alice/serve/launch.py", line 77, in <module>',
             "RuntimeError: open: Address family not supported by protocol", *_progress_lines(20),
             "/home/alice/run.sh: line 12: 480211 Killed                  python launch.py"]
    d = matcher.diagnose("\n".join(lines))
    assert d.first_failure is not None and d.first_failure.line_no == 123 and d.first_failure.entry_id is None
    assert not any(m.confident and m.role == "root-cause" for m in d.matches)
    assert any(m.entry_id == "host-oom-killed" for m in d.matches)  # still listed, below the threshold


def test_a_root_cause_matched_only_on_a_warning_the_program_went_on_from_does_not_lead(matcher: Matcher):
    lines = [*_progress_lines(40),
             "2026-06-16 17:09:12,988 - root - WARNING - Direct load failed: Error(s) in loading state_dict for "
             "DistributedDataParallel:",
             '\tMissing key(s) in state_dict: "module.pos_embed", "module.encoder.0.weight".',
             '\tUnexpected key(s) in state_dict: "pos_embed", "encoder.0.weight".',
             '2026-06-16 17:09:12,989 - root - INFO - Added "module." prefix to checkpoint keys',
             *_progress_lines(40), "[rank2]: Traceback (most recent call last):",
             '[rank2]:   File "/home/alice/llm/infer.py", line 1470, in <module>',
             "[rank2]: PermissionError: [Errno 13] Permission denied: '/scratch/alice/out/run_0016_output.nc'"]
    d = matcher.diagnose("\n".join(lines))
    assert d.first_failure is not None and d.first_failure.exception == "PermissionError"
    assert not any(m.confident and m.role == "root-cause" for m in d.matches)


def test_the_lines_after_a_failure_that_carry_its_message_name_its_entry(matcher: Matcher):
    lines = [*_progress_lines(6), "terminate called after throwing an instance of 'c10::Error'",
             "  what():  CUDA error: an illegal memory access was encountered",
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect."]
    ff = matcher.diagnose("\n".join(lines)).first_failure
    assert ff is not None and ff.line_no == 7 and ff.entry_id == "cuda-illegal-memory-access"


def test_an_error_logged_before_any_consequence_is_the_first_failure(matcher: Matcher):
    # c10's logger prints the month unpadded; torch.distributed's Python logger names its file by path;
    # absl's month 00 is TensorFlow's import-time noise in a healthy job
    lines = ["E0000 00:00:1731234567.123456   12345 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting "
             "to register factory for plugin cuDNN when one has already been registered",
             "[W304 19:44:37.543184455 socket.cpp:767] [c10d] The client socket cannot be initialized to "
             "connect to [gpu-01]:29500 (errno: 97 - Address family not supported by protocol).",
             "[E304 19:44:40.793259564 TCPStore.cpp:277] [c10d] The server socket on 29500 has failed to bind.",
             "E0304 19:44:41.006000 690616 torch/distributed/elastic/agent/server/api.py:965] Traceback (most "
             "recent call last):",
             'E0304 19:44:41.006000 690616 torch/distributed/elastic/agent/server/api.py:965]   File '
             '"/opt/conda/lib/python3.12/site-packages/torch/distributed/elastic/utils/store.py", line 160, in '
             "_barrier_nonblocking",
             "E0304 19:44:41.006000 690616 torch/distributed/elastic/agent/server/api.py:965]     "
             "idx = store.add(num_members_key, 1)",
             "E0304 19:44:41.006000 690616 torch/distributed/elastic/agent/server/api.py:965] "
             "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed."]
    ff = matcher.diagnose("\n".join(lines)).first_failure
    assert ff is not None and ff.line_no == 3 and not ff.cascade


def test_a_rank_in_another_collective_than_its_peers_is_behind(matcher: Matcher):
    lines = [
        f"[rank{r}]:[E501 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum=512, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 "
        "milliseconds before timing out."
        for r, op in ((0, "ALLREDUCE"), (1, "ALLREDUCE"), (2, "BROADCAST"), (3, "ALLREDUCE"))
    ]
    assert matcher.diagnose("\n".join(lines)).lagging_ranks == ["2"]


def test_a_heading_or_comment_in_a_paste_is_not_a_failure(matcher: Matcher):
    lines = ["# job 4512: CUDA error: out of memory on the second node, see below", *_progress_lines(4),
             "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered"]
    ff = matcher.diagnose("\n".join(lines)).first_failure
    assert ff is not None and ff.line_no == 6


def test_ranks_that_stopped_printing_in_a_hang_with_no_watchdog_are_named_as_such(matcher: Matcher):
    s = next(s for s in SCENARIOS if s.name == "hang-no-watchdog-time-limit")
    d = matcher.diagnose(s.text)
    assert "Silent: ranks 0, 25 stopped printing before the others: look there first." in render_diagnosis(d)


def test_a_traceback_printed_after_other_text_on_its_line_still_names_the_users_frame(matcher: Matcher):
    lines = [*_progress_lines(4),
             "\r  0%|          | 0/801 [00:00<?, ?it/s][rank2]: Traceback (most recent call last):",
             '[rank2]:   File "/home/alice/llm/train.py", line 329, in main',
             "[rank2]:     loss = model(**batch).loss",
             '[rank2]:   File "/opt/conda/lib/python3.13/site-packages/torch/nn/functional.py", line 3504, in cross_entropy',
             "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 18.84 GiB.",
             "[2026-02-27 11:31:26 TP13] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/home/alice/serve/engine.py", line 105, in __init__',
             "RuntimeError: open: Address family not supported by protocol"]
    ff = matcher.diagnose("\n".join(lines)).first_failure
    assert ff is not None and (ff.line_no, ff.rank, ff.frame, ff.traceback_start) == (9, "2", "train.py:329 in main", 5)
    ff = matcher.diagnose("\n".join(lines[:4] + lines[9:])).first_failure
    assert ff is not None and (ff.frame, ff.traceback_start) == ("engine.py:105 in __init__", 5)


def test_a_streamed_log_reads_the_world_size_from_nccls_init_lines(matcher: Matcher, tmp_path: Path):
    # large enough to be read as a stream of candidate lines; the highest rank (15) printed nothing
    noise = "".join(f"[rank{r % 8}]: iteration {r:7d} | lm loss 2.731E+00 | grad norm 0.91\n" for r in range(8000))
    init = "".join(f"gpu-0{r // 8 + 1}:{4000 + r}:{4100 + r} [{r % 8}] NCCL INFO comm 0x55d{r:04x} rank {r} nranks 16 "
                   f"cudaDev {r % 8} busId {r % 8}0000 commId 0x8f3a - Init COMPLETE\n" for r in range(16))
    log = tmp_path / "job.log"
    log.write_text(init + noise + "".join(_watchdog(r) + "\n" for r in range(15)))
    assert log.stat().st_size > 256 * 1024
    assert matcher.diagnose_file(log).silent_ranks == ["15"]


def _two_nodes(failing_line: str, *, launch: bool) -> str:
    """A two-node torchrun job (--tee: every line "host: [defaultN]:", N the rank on its node) where the
    second node's fourth process fails and the fifteen others time out naming their global ranks."""
    lines = []
    if launch:
        lines += [f"algo-{n + 1}: torchrun --nnodes 2 --nproc_per_node 8 --master_addr algo-1 --node_rank {n} train.py"
                  for n in range(2)]
    lines += [f"algo-{n + 1}: [default{r}]:step 100 loss 2.31" for n in range(2) for r in range(8)]
    lines.append(f"algo-2: [default3]:{failing_line}")
    lines += [f"algo-{g // 8 + 1}: [default{g % 8}]:{_watchdog(g)}" for g in range(16) if g != 11]
    return "\n".join(lines)


def test_torchruns_local_rank_on_a_second_node_is_reported_as_its_global_rank(matcher: Matcher):
    # [default3] on the second node of two with 8 processes each is rank 11, not rank 3: the launch commands
    # say where each node's ranks start
    d = matcher.diagnose(_two_nodes("RuntimeError: CUDA error: an illegal memory access was encountered",
                                    launch=True))
    ff = d.first_failure
    assert ff is not None and (ff.rank, ff.host, ff.local_rank) == ("11", "algo-2", None)
    assert d.silent_ranks == []  # rank 11 spoke: it failed
    assert "First failure: line 19 (rank 11, host algo-2)" in render_diagnosis(d)
    watchdog = next(m for m in d.matches if m.entry_id == "nccl-watchdog-timeout")
    assert "11" not in watchdog.ranks and "15" in watchdog.ranks and len(watchdog.ranks) == 15


def test_a_local_rank_the_log_does_not_place_is_called_local_and_no_rank_is_called_silent(matcher: Matcher):
    d = matcher.diagnose(_two_nodes("RuntimeError: CUDA error: an illegal memory access was encountered",
                                    launch=False))
    ff = d.first_failure
    assert ff is not None and (ff.rank, ff.host, ff.local_rank) == (None, "algo-2", "3")
    # before: "rank 3", and rank 11 (who failed) reported as having printed nothing
    assert d.silent_ranks == []
    assert "(local rank 3, host algo-2)" in render_diagnosis(d)
    lead = json.dumps(render.triage_lead(d))
    assert "local rank 3" in lead and "host algo-2" in lead


GLOO_RECV_TIMEOUT = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
                     "1800000ms for recv operation to complete")


def test_a_timeout_from_a_local_rank_the_log_does_not_place_is_reported_as_local(tmp_path: Path, capsys):
    # a two-node torchrun job (--tee, no launch command pasted) hangs in a gloo all_gather_object: nothing
    # fails, so the first timeout is the first failure; its line names no rank of the job, only algo-2's 4th
    lines = [f"algo-{n}: [default{r}]:epoch 3 step 1200 loss 2.31" for n in (1, 2) for r in range(8)]
    waiting = [("algo-2", 3)] + [(f"algo-{n}", r) for n in (1, 2) for r in range(8) if (n, r) not in ((2, 3), (1, 5))]
    for host, local in waiting:
        lines += [f"{host}: [default{local}]:{line}" for line in (
            "Traceback (most recent call last):",
            '  File "/workspace/train.py", line 211, in <module>',
            "    evaluate(model, loader)",
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2277, '
            "in all_gather_object",
            "    all_gather(object_size_list, local_size, group=group)",
            GLOO_RECV_TIMEOUT,
        )]
    log = tmp_path / "job.out"
    log.write_text("\n".join(lines) + "\n")
    assert main(["diagnose", str(log), "--json"]) == 0
    ff = json.loads(capsys.readouterr().out)["first_failure"]
    assert (ff["line_no"], ff["cascade"], ff["host"]) == (22, True, "algo-2")
    assert (ff["rank"], ff["local_rank"]) == (None, "3")  # before: neither, the process it came from lost


def test_a_line_naming_both_ranks_places_that_process_for_the_rest_of_the_log(matcher: Matcher):
    text = _two_nodes("[rank11]:W0501 12:00:00.000000 1 train.py:10] loading shard 3", launch=False)
    text += "\nalgo-2: [default3]:RuntimeError: CUDA error: an illegal memory access was encountered"
    d = matcher.diagnose(text)
    ff = d.first_failure
    assert ff is not None and (ff.rank, ff.local_rank) == ("11", None)


def test_under_srun_label_with_one_torchrun_per_node_the_rank_is_not_the_task_number(matcher: Matcher):
    # `srun -l torchrun …`: every line of node 1 starts "1: "; its processes name their global rank on
    # some lines ("[rank11]:") and only their local rank on others
    lines = [f"{g // 8}: [default{g % 8}]:[rank{g}]: step 100 loss 2.31" for g in range(16)]
    lines.append("1: [default3]:RuntimeError: CUDA error: an illegal memory access was encountered")
    lines += [f"{g // 8}: [default{g % 8}]:{_watchdog(g)}" for g in range(16) if g != 11]
    d = matcher.diagnose("\n".join(lines))
    ff = d.first_failure
    assert ff is not None and (ff.line_no, ff.rank) == (17, "11")  # not rank 1 (the task) nor 3 (local)
    assert d.silent_ranks == []


def test_a_japanese_thread_gets_the_first_failure_and_the_quiet_ranks_in_japanese(matcher: Matcher):
    """The answer was localised but the lead around it was not: "line 57 · rank 4 · in `train.py:…`",
    ":mag: Rank 7 (gpu-02) printed nothing while the others timed out: look there first." and a fallback
    text starting "First failure:" in a thread asked in Japanese."""
    # The question is a message's text and the log its attachment: the answer takes the question's language
    # (matcher.ranking.combine), as here.
    asked = matcher.diagnose("学習が途中で落ちました。原因を教えてください。")
    assert asked.lang == "ja"
    s = next(s for s in SCENARIOS if s.name == "user-shape-mismatch")
    d = combine([asked, matcher.diagnose(s.text)])
    fallback, blocks = render.answer(d, diagnosis_id=None, always_answer=True) or ("", [])
    lead = blocks[0]["text"]["text"]
    assert lead.startswith(f"*最初の失敗* · {s.first_line} 行目 · rank 4") and "の中" in lead, lead
    assert "line " not in lead and " in `" not in lead
    assert fallback.startswith("最初の失敗:") and "First failure" not in fallback
    quiet = next(s for s in SCENARIOS if s.name == "hang-silent-7")
    d = combine([asked, matcher.diagnose(quiet.text)])
    _fallback, blocks = render.answer(d, diagnosis_id=None, always_answer=True) or ("", [])
    said = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    assert ":mag: rank 7 (gpu-02) はほかの rank がタイムアウトする間、何も出力していません。まずそこを見てください。" in said, said
    assert "look there first" not in said
