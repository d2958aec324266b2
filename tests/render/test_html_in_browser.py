"""The answer as Slack would show it in a 600 px thread pane: the first fix step is on the first screen.

``tracebot console --html`` writes the conversation from the same Block Kit payloads Slack gets; headless
Chromium lays it out and reports where things are. Screenshots are kept under tests/artifacts/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import Measured, measure
from tracebot.render import html, slack

REPO = Path(__file__).resolve().parents[2]
FIRST_SCREEN_PX = 600

OOM_PASTE = """\
Traceback (most recent call last):
  File "/workspace/train.py", line 212, in <module>
    loss = model(batch).loss
  File "/usr/local/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _call_impl
    return forward_call(*args, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of \
79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. \
Of the allocated memory 74.50 GiB is allocated by PyTorch, and 2.11 GiB is reserved by PyTorch but \
unallocated. If reserved but unallocated memory is large try setting \
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."""

NCCL_LOG = """\
[rank3]:[E1123 10:02:11.123456 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation \
timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran \
for 600034 milliseconds before timing out.
[rank3]:[E1123 10:02:11.123999 ProcessGroupNCCL.cpp:1785] [PG 0 Rank 3] Exception (either an error or \
timeout) detected by watchdog at work: 88, last enqueued NCCL work: 88, last completed NCCL work: 87.
[rank3]:[E1123 10:02:11.124100 ProcessGroupNCCL.cpp:630] [Rank 3] Some NCCL operations have failed or timed \
out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on \
corrupted/incomplete data.
[rank3]:[E1123 10:02:11.124200 ProcessGroupNCCL.cpp:636] [Rank 3] To avoid data inconsistency, we are \
taking the entire process down."""

JAPANESE_QUESTION = "@tracebot 学習中に「CUDA out of memory」と出て落ちました。どうすればいいですか？"


def console_page(script: str, tmp_path: Path) -> Path:
    page = tmp_path / "conversation.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TRACEBOT_"))}
    done = subprocess.run(
        [sys.executable, "-m", "tracebot.cli", "console", "--db", ":memory:", "--html", str(page)],
        input=script, capture_output=True, text=True, timeout=180, cwd=REPO,
        env={**env, "TRACEBOT_LOAD_ENTRYPOINTS": "0"},
    )
    assert done.returncode == 0, done.stderr
    return page


def the_answer(messages: list[Measured], *, ephemeral: bool = False) -> Measured:
    answers = [m for m in messages if m.bot and m.ephemeral == ephemeral and m.first_step_bottom is not None]
    assert answers, f"no answer with fix steps in {messages}"
    return answers[0]


@pytest.mark.parametrize(
    ("name", "script", "words"),
    [
        ("cuda-oom", OOM_PASTE, "Lower the per-GPU micro-batch"),
        ("nccl-watchdog", NCCL_LOG, "Search the whole log"),
        ("japanese-question", JAPANESE_QUESTION, "マイクロバッチ"),
    ],
)
def test_the_first_fix_step_is_on_the_first_screen_of_the_answer(name, script, words, tmp_path):
    page = console_page(script, tmp_path)
    assert words in page.read_text(encoding="utf-8"), "the answer is the one this case is about"
    messages, _ = measure(page, name, tmp_path)
    answer = the_answer(messages)
    print(f"{name}: first fix step ends at {answer.first_step_bottom:.0f}px of a {answer.height:.0f}px answer")
    assert answer.first_step_bottom <= FIRST_SCREEN_PX


def test_the_measurement_fails_an_answer_that_quotes_the_paste_back_before_its_fix(matcher, tmp_path):
    # The layout the compact answer replaced: the paste quoted again, the whole cause, then every step
    # (the "Why & all steps" blocks). Measured the same way, its first fix step is off the first screen,
    # so the check above can fail.
    diagnosis = matcher.diagnose(OOM_PASTE)
    _, why = slack.details(diagnosis.matches, diagnosis.confident[0].entry_id)
    old = html.Shown("tracebot", "1.000001", blocks=[slack.section(slack.code(OOM_PASTE)), *why])
    page = tmp_path / "quoted.html"
    page.write_text(html.page([old]), encoding="utf-8")
    (answer,), _ = measure(page, "cuda-oom-quoted-before-fix", tmp_path)
    print(f"quoted before the fix: first fix step ends at {answer.first_step_bottom:.0f}px of {answer.height:.0f}px")
    assert answer.first_step_bottom > FIRST_SCREEN_PX
