"""How sure the bundled knowledge base's model is, as a person in a channel sees it: a question told in
one's own words gets its entry confidently, chat gets nothing, and a paste nobody is sure about still
shows its three closest guesses, none of them confident (and no guess stands beside a confident answer)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tracebot.matcher import Matcher
from tracebot.matcher.core import MODEL_GUESS_PROBABILITY, MODEL_GUESSES, MODEL_MIN_PROBABILITY
from tracebot.matcher.model import RankingModel

# Written here, in the words of someone who has not read the entries (none is an entry's text).
QUESTIONS = [
    ("why is GPU memory still in use after my job was cancelled? nvidia-smi lists no processes", "gpu-zombie-process"),
    ("how do I get a stack trace of every rank of a hung multi-node job?", "distributed-hang-py-spy"),
    ("DDP says some parameters did not receive gradients, what should I do?", "ddp-unused-parameters"),
    ("SLURM cancelled my job because of the time limit, how do I give it more time?", "slurm-time-limit"),
    ("どうしてジョブが時間制限でキャンセルされたのですか？延長する方法を教えてください", "slurm-time-limit"),
    ("any idea why torch.cuda.is_available() returns False on the new node?", "no-gpu-visible"),
]
CHAT = [
    "same problem here on 8 A100s",
    "ok, trying that now",
    "thanks, that did it!",
    "any news on this one?",
    "could you share the full log?",
    "I'll close this then",
]
# Pastes the model is not sure about, each with more than three candidates.
UNSURE = [
    "our eval job died overnight, the log only says: RuntimeError: connection to the store timed out",
    "the job got killed during the night and now I see nothing in the output file, what happened?",
    "Why does my DDP training freeze forever at the start when I use two nodes?",
    "my run just stops making progress after a few hundred steps on 16 GPUs, no error at all",
    *CHAT,
]


@pytest.mark.parametrize(("text", "entry"), QUESTIONS)
def test_a_question_in_a_persons_own_words_is_answered_confidently(matcher: Matcher, text: str, entry: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, [
        (m.entry_id, m.score, m.confident) for m in d.matches[:3]
    ]


@pytest.mark.parametrize("text", CHAT)
def test_chat_in_a_thread_gets_no_confident_answer(matcher: Matcher, text: str):
    assert not matcher.diagnose(text).confident


@pytest.mark.parametrize("text", UNSURE)
def test_an_unsure_answer_still_shows_three_closest_guesses_none_of_them_confident(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    probs = [m.probability for m in d.matches]
    assert all(p is not None for p in probs)
    if probs and max(probs) >= MODEL_MIN_PROBABILITY and not d.confident:
        # the model's likeliest candidates down to the guesses' floor are all shown
        from tracebot.matcher.features import text_info

        model = matcher.model
        assert model is not None
        aggs, prose = matcher.evidence_of(text)
        cand = model.probabilities(text, text_info(text, prose), aggs)
        likely = sorted(cand.values(), reverse=True)[:MODEL_GUESSES]
        expected = sum(p >= MODEL_GUESS_PROBABILITY for p in likely)
        assert len(d.matches) >= expected
    for m in d.matches:
        if m.probability is not None and m.probability < MODEL_MIN_PROBABILITY and m.kind not in ("anchor", "regex"):
            assert not m.confident, m.entry_id


@pytest.mark.parametrize(("text", "_"), QUESTIONS)
def test_no_guess_stands_beside_a_confident_answer(matcher: Matcher, text: str, _: str):
    d = matcher.diagnose(text)
    assert d.confident
    assert all(m.probability >= MODEL_MIN_PROBABILITY or m.kind in ("anchor", "regex") for m in d.matches)


# A person stating a problem without asking (a GitHub-style title and body), written here; and texts a
# tool wrote or a reply saying what fixed it, which resemble an entry but state no problem of the reader's.
STATEMENTS = [
    "Distributed training on two nodes hangs in init_process_group\n\n"
    "The master keeps waiting for the workers until the rendezvous times out.",
    "GPU memory is not released after the training process is killed\n\n"
    "After I kill the run with Ctrl-C, nvidia-smi still shows the memory in use on every GPU.",
]
NOT_STATEMENTS = [
    # DeepSpeed's info line: a tool's line, it cites the source line that printed it
    "[2024-01-01 10:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 1, reducing to 1",
    # DDP's warning line: read as prose, but it cites the source line that printed it
    "[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP constructor, but did not "
    "find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd "
    "graph every iteration, which can adversely affect performance.",
    # a launch command with NCCL settings
    "NCCL_DEBUG=INFO NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=eth0 torchrun --nnodes 2 --nproc_per_node 8 train.py",
    # a reply saying what fixed it
    "Fixed it: the job hung because NCCL_IB_DISABLE was set on one node, removing it solved the hang, thanks!",
]


# A statement whose entry has no close phrase (its answer rests on wording alone): the statement point
# decides. The same report with a last line saying what fixed it is a resolved reply, capped wherever the
# point is (four lines: the thank-you rule for three lines or fewer does not cover it).
STATED_ON_WORDING = (
    "When our multi-GPU run hangs we suspect one GPU pair of the node\n\n"
    "Running a small distributed test on subsets of the GPUs, the subset with GPU 3 always fails.",
    "isolate-bad-gpus",
)
_REPORT = (
    "When our multi-GPU run hung we suspected one GPU pair of the node\n"
    "Running a small distributed test on subsets of the GPUs\n"
    "the subset with GPU 3 always failed.\n"
)
RESOLVED_REPORTS = [
    _REPORT + "Replacing GPU 3 solved it, thanks!",
    _REPORT + "Works now after the vendor replaced that GPU.",
    # saying what fixed it, without "thanks", "solved" or "fixed it"
    _REPORT + "Replacing GPU 3 fixed the hang.",
    _REPORT + "Fixed by replacing GPU 3.",
    _REPORT + "The vendor replaced GPU 3 and the hang went away.",
]


@contextmanager
def statement_point(model: RankingModel, p: float) -> Iterator[None]:
    """The model's statement point is ``p`` at every threshold."""
    model.statement_point = lambda threshold: p  # type: ignore[method-assign]
    try:
        yield
    finally:
        del model.statement_point


def test_a_statement_on_wording_alone_is_confident_only_above_the_statement_point(matcher: Matcher):
    text, entry = STATED_ON_WORDING
    model = matcher.model
    assert model is not None
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident
    with statement_point(model, 2.0):  # no statement point: the cap on answers from wording alone holds
        d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and not d.best.confident


@pytest.mark.parametrize("text", RESOLVED_REPORTS)
def test_a_resolved_report_is_no_statement_even_at_the_loosest_point(matcher: Matcher, text: str):
    model = matcher.model
    assert model is not None
    with statement_point(model, model.p_confident):
        d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == STATED_ON_WORDING[1]  # it reads like the entry
    assert not d.confident


@pytest.mark.parametrize("text", STATEMENTS)
def test_a_problem_stated_in_a_persons_words_reads_as_a_statement(matcher: Matcher, text: str):
    from tracebot.matcher.features import text_info

    _, prose = matcher.evidence_of(text)
    info = text_info(text, prose)
    assert info.states and not info.asks
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.confident


@pytest.mark.parametrize("text", NOT_STATEMENTS)
def test_a_tools_line_a_command_or_a_fix_report_stays_unconfident_even_at_the_loosest_statement_point(
    matcher: Matcher, text: str
):
    # The statement point is calibrated never below the confidence point; even there, these texts keep the
    # cap on answers from wording alone (the form decides, not how sure the model is).
    model = matcher.model
    assert model is not None and model.statement_point(matcher.threshold) >= model.p_confident
    with statement_point(model, model.p_confident):
        assert not matcher.diagnose(text).confident


# A program's error pasted alone (written here): py-spy's error on a process it may not read, with no
# anchor or regex of the entry on it (its answer rests on wording alone), and no question asked.
SHOWN_ON_WORDING = ("py-spy dump --pid 4242\nError: Permission denied (os error 13)", "py-spy-permission-denied")


def test_an_error_a_program_printed_is_answered_confidently_when_the_model_is_past_the_statement_point(
    matcher: Matcher,
):
    from tracebot.matcher.features import text_info

    text, entry = SHOWN_ON_WORDING
    model = matcher.model
    assert model is not None
    aggs, prose = matcher.evidence_of(text)
    assert not any(ev.strong for ev in aggs.values())  # no anchor or regex: wording alone
    info = text_info(text, prose)
    assert info.shows_error and not info.asks and not info.states
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident
    with statement_point(model, 2.0):  # no statement point: the cap on answers from wording alone holds
        d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and not d.best.confident


# The same error under a few words saying it is over: too short to be prose (the thank-you rule reads prose),
# so only the shown-error rule sees the text, and it must not answer in the channel unprompted.
RESOLVED_SHOWN = ["fixed, thanks\n{}", "{}\nworks now, thx", "{}\nsolved", "is gone now\n{}"]


@pytest.mark.parametrize("form", RESOLVED_SHOWN)
def test_an_error_shown_beside_a_word_that_it_is_over_gets_no_confident_answer(matcher: Matcher, form: str):
    text, entry = SHOWN_ON_WORDING
    d = matcher.diagnose(form.format(text))
    assert d.best is not None and d.best.entry_id == entry  # asked for, it is still shown
    assert not d.best.confident


@pytest.mark.parametrize("text", NOT_STATEMENTS[:3])
def test_a_tools_healthy_or_info_line_shows_no_error(matcher: Matcher, text: str):
    # DeepSpeed's OVERFLOW info line, DDP's warning, a launch command: they read like an entry, but no line
    # says something failed, so the cap on wording alone holds for them at any statement point (above).
    from tracebot.matcher.features import text_info

    _, prose = matcher.evidence_of(text)
    assert not text_info(text, prose).shows_error


# A change to code, pasted or unfurled from a link: it names the error it handles, so it reads like the
# entry, but nobody in the thread has that error. Written here, one per form of describes_change.
CHANGES = {
    "an imperative title": "Handle torch.cuda.OutOfMemoryError in the evaluation loop by halving the batch",
    "a conventional-commit title": "fix(trainer): retry the step with a smaller batch after CUDA out of memory",
    "a bracketed tag": "[WIP] Add a retry on CUDA out of memory to the evaluation loop",
    "a pull request's description": "This PR catches torch.cuda.OutOfMemoryError during evaluation and retries "
    "with half the batch size.",
    "a review's approval": "LGTM — the eval loop now catches torch.cuda.OutOfMemoryError and retries with half the batch",
    "a pull-request template": "Retry evaluation after an OOM\n\n*Description of changes:*\n"
    "Catch torch.cuda.OutOfMemoryError: CUDA out of memory and halve the evaluation batch.",
    "a title with I/O in it": "Add NVMe I/O offload to ZeRO-3 for CUDA out of memory in the evaluation loop",
    "a title naming a helper": "Add a helper that retries the step after CUDA out of memory in the evaluation loop",
    "a closing trailer": "Halve the batch after CUDA out of memory in eval\n\nFixes #4521",
    "a commit trailer": "Halve the batch after CUDA out of memory in eval\n\nSigned-off-by: A Developer <dev@example.com>",
}
# The same error as someone's problem: the change form must not silence these.
OOM_PROBLEMS = [
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)",
    "Added gradient checkpointing but I still get CUDA out of memory at step 10, how do I fix it?",
    "This PR did not help: my eval loop still dies with torch.cuda.OutOfMemoryError, any idea?",
]


@pytest.mark.parametrize("text", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_that_handles_an_error_gets_no_unprompted_answer(matcher: Matcher, text: str):
    from tracebot.matcher.core import describes_change

    assert describes_change(text)
    d = matcher.diagnose(text)
    # it still reads like the entry (asked for, it is shown), but nothing is posted unprompted
    assert d.best is not None and d.best.entry_id == "cuda-oom"
    assert not d.confident and any("reads as a change" in n for n in d.notes)


# Someone's problem whose first line starts the way a change's title does: a log under a line that only looks
# like a title ("test: …", "Add …"), a fix that did not work, something that broke, without a question mark.
PROBLEMS_LIKE_CHANGES = [
    ("test: tests/test_ckpt.py::test_save\nOSError: [Errno 28] No space left on device", "disk-full-on-save"),
    ("Add 8 more nodes\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
     "    dist.init_process_group('nccl')\nRuntimeError: Address already in use", "master-port-in-use"),
    ("Enable gradient checkpointing, still CUDA out of memory on the 70B model", "cuda-oom"),
    ("Fixes from the thread didn't work, torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
     "cuda-oom"),
    ("Fixes #4521 was merged but our eval still fails with torch.cuda.OutOfMemoryError: CUDA out of memory. "
     "Tried to allocate 2.00 GiB", "cuda-oom"),
    ("This commit broke our training: NCCL watchdog timeout on every rank since yesterday", "nccl-watchdog-timeout"),
    ("Add 2 nodes\nsbatch したジョブが DUE TO TIME LIMIT でキャンセルされて止まりました", "slurm-time-limit"),
    ("Support for H100 is broken: RuntimeError: CUDA error: no kernel image is available for execution on the device",
     "cuda-no-kernel-image"),
]


# A question typed without its question mark, after a change's verb: asked, its entry is shown confidently.
QUESTIONS_LIKE_CHANGES = [
    ("Handle CUDA out of memory in the eval loop, how do i do that", "cuda-oom"),
    ("Enable more time for a SLURM job cancelled at the time limit, is there a way", "slurm-time-limit"),
]


@pytest.mark.parametrize(("text", "entry"), QUESTIONS_LIKE_CHANGES)
def test_a_question_without_its_question_mark_that_starts_like_a_change_is_answered(
    matcher: Matcher, text: str, entry: str
):
    from tracebot.matcher.core import describes_change

    assert not describes_change(text)
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, d.notes


@pytest.mark.parametrize(("text", "entry"), PROBLEMS_LIKE_CHANGES)
def test_a_problem_that_starts_like_a_change_is_still_answered_confidently(matcher: Matcher, text: str, entry: str):
    from tracebot.matcher.core import describes_change

    assert not describes_change(text)
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, d.notes


@pytest.mark.parametrize("text", OOM_PROBLEMS)
def test_the_same_error_as_someones_problem_is_still_answered_confidently(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == "cuda-oom" and d.best.confident


# A tool's error line under a step's name: "build:" and "test:" are a CI step's or a make target's prefix here,
# not a conventional commit's type, and the line after them is the error as the tool printed it.
ERROR_LINES_AFTER_A_TAG = [
    ("build: RuntimeError: CUDA error: no kernel image is available for execution on the device",
     "cuda-no-kernel-image"),
    ("test: OSError: [Errno 28] No space left on device", "disk-full-on-save"),
    ("[train] ERROR: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom"),
    # a logger's level and its separator ("%(levelname)s:%(name)s:%(message)s")
    ("test: CRITICAL:root:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom"),
]


@pytest.mark.parametrize(("text", "entry"), ERROR_LINES_AFTER_A_TAG)
def test_an_error_line_after_a_step_name_is_answered_not_read_as_a_change(matcher: Matcher, text: str, entry: str):
    from tracebot.matcher.core import describes_change

    assert not describes_change(text)
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, d.notes


def test_a_one_line_build_log_is_not_read_as_a_change():
    # nvcc's own error: no entry covers an architecture nvcc is too old for, but nothing may say it is a change
    from tracebot.matcher.core import describes_change

    assert not describes_change("build: nvcc fatal   : Unsupported gpu architecture 'compute_90'")
    assert not describes_change("ci: error: could not find a version that satisfies the requirement torch==2.13")


# A change's title that shouts a word after its type: a capitalised word is emphasis, not a logger's level (a
# level is followed by its separator: "ERROR:", "CRITICAL - ", "FATAL |").
SHOUTED_TITLES = [
    "fix: CRITICAL NCCL watchdog timeout on multi-node jobs",
    "fix(ddp): FATAL hang in all_reduce after checkpoint",
    "feat: ERROR level logs for NCCL timeouts",
]


@pytest.mark.parametrize("text", SHOUTED_TITLES)
def test_a_change_title_with_a_capitalised_word_after_its_type_is_still_a_change(matcher: Matcher, text: str):
    from tracebot.matcher.core import describes_change

    assert describes_change(text)
    d = matcher.diagnose(text)
    assert not d.confident, [m.entry_id for m in d.confident]  # a pasted pull request's title: no unprompted answer


@pytest.mark.parametrize(
    "text",
    [
        "Training hangs after 200 steps on 4 nodes",  # a problem's title
        "use on RTX5090",  # "use" is no change verb here: an issue titled by what the user does
        "Added NCCL_DEBUG=INFO and the job still hangs at the first all_reduce",
        "Check failed: result == ncclSuccess (1 vs. 0) unhandled cuda error",
        "Supported? my A100 node shows no GPUs in the container",  # a question, not a title
    ],
)
def test_a_problem_is_not_read_as_a_change(text: str):
    from tracebot.matcher.core import describes_change

    assert not describes_change(text)


def test_the_statement_point_is_calibrated_among_the_answers_capped_at_the_threshold_asked_for():
    import numpy as np

    # out of fold: wrong answers at 0.99 with phrase scores of 0.80 (capped only at a threshold above 80),
    # right ones from 0.95 to 0.98 without phrase evidence
    rows = [(0.99, 0.0, 0.80)] * 3 + [(0.95 + k / 100, 1.0, 0.0) for k in range(4)] * 100
    model = RankingModel(spaces=[], coef=np.zeros(0), intercept=0.0, entry_words=[], roles=np.zeros(0),
                         p_confident=0.9, statements=np.array(rows))
    assert model.statement_point(75) == 0.95  # the wrong answers are not capped at 75: not among them
    assert model.statement_point(90) == 2.0  # at 90 they are, and nothing is right 99.5 % of the time from 0.99
    # an answer with no phrase at all (the model's alone) is capped at every threshold, 0 too: lowering the
    # threshold to 0 must not lose the point (and with it every such answer) that 1 has
    assert model.statement_point(0) == model.statement_point(1) == 0.95
    only_phrases = RankingModel(spaces=[], coef=np.zeros(0), intercept=0.0, entry_words=[], roles=np.zeros(0),
                                p_confident=0.9, statements=np.array([(0.99, 1.0, 0.5)] * 10))
    assert only_phrases.statement_point(0) == 2.0  # a phrase is never below 0: none is capped there
    model.p_confident = 0.97
    assert model.statement_point(75) == 0.97  # never below the confidence point


@pytest.mark.parametrize("threshold", [75.0, 90.0])
def test_a_statement_is_judged_by_the_statement_point_at_the_threshold_it_is_diagnosed_at(
    matcher: Matcher, threshold: float
):
    text, entry = STATED_ON_WORDING
    model = matcher.model
    assert model is not None
    asked: list[float] = []
    model.statement_point = lambda t: asked.append(t) or 2.0  # type: ignore[method-assign]
    try:
        d = matcher.diagnose(text, threshold=threshold)
    finally:
        del model.statement_point
    assert asked == [threshold]  # a channel's threshold, --threshold: not the default one
    assert d.best is not None and d.best.entry_id == entry and not d.best.confident


# Written here. A Chinese report signs off with 谢谢 ("thanks") as an English one does; its asking is in words
# (为什么 why, 怎么 how, 请问 may I ask, 麻烦 would you mind), not a question mark.
CHINESE_REPORT_SIGNED_OFF = (
    "启动训练时报错 Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 3b000，麻烦看一下怎么改，谢谢",
    "nccl-invalid-usage-duplicate-gpu",
)
CHINESE_THANKS = "改了 CUDA_VISIBLE_DEVICES 以后 Duplicate GPU detected 就没有了，谢谢"


def test_a_chinese_report_that_asks_in_words_and_signs_off_with_thanks_is_answered(matcher: Matcher):
    text, entry = CHINESE_REPORT_SIGNED_OFF
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, d.notes


def test_a_chinese_thank_you_naming_the_error_it_got_rid_of_stays_silent(matcher: Matcher):
    assert not matcher.diagnose(CHINESE_THANKS).confident


# Written here (review12). The Chinese asking words also say "now I know why/how", "that's why", "sorry for the
# trouble" and "anyway" in a closing thank-you; such a text asks nothing and must stay silent like "已解决，谢谢".
CHINESE_RESOLVED_WITH_ASKING_WORDS = [
    "Duplicate GPU detected : rank 2 and rank 5 both on CUDA device 8a000，现在知道为什么了，已解决，谢谢",
    "Duplicate GPU detected : rank 0 and rank 3 both on CUDA device 1c000，明白怎么回事了，多谢大家，谢谢",
    "Duplicate GPU detected : rank 1 and rank 4 both on CUDA device 5e000，已解决，给各位添麻烦了，谢谢",
    "Duplicate GPU detected : rank 6 and rank 7 both on CUDA device 9d000，原来这就是为什么会报错，谢谢",
    "Duplicate GPU detected : rank 2 and rank 3 both on CUDA device 4f000，学会了如何设置可见设备，已解决，谢谢",
]
CHINESE_REPORT_NOT_KNOWING_HOW = (
    "训练启动就报 Duplicate GPU detected : rank 1 and rank 2 both on CUDA device 2a000，不知道怎么改，谢谢"
)


@pytest.mark.parametrize("text", CHINESE_RESOLVED_WITH_ASKING_WORDS)
def test_a_chinese_thank_you_that_says_it_now_knows_why_stays_silent(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert not d.confident and "thank-you" in " ".join(d.notes), d.notes


def test_a_chinese_report_that_does_not_know_how_is_still_answered(matcher: Matcher):
    d = matcher.diagnose(CHINESE_REPORT_NOT_KNOWING_HOW)
    assert d.best is not None and d.best.entry_id == "nccl-invalid-usage-duplicate-gpu" and d.best.confident, d.notes


# Written here. AWS answers any internal failure with "InternalServerError: We encountered an internal error.
# Please try again." (S3, a Pipe-mode input channel, a job's FailureReason); the seed document names it for a
# large checkpoint's upload. As an anchor it made every such error confidently the checkpoint entry; as an
# exemplar the rest of the text decides.
AWS_INTERNAL_ERRORS_ELSEWHERE = [
    "UnexpectedStatusException: Error for Training job tf-pipe-2024-03-01-10-00-00-001: Failed. Reason: ClientError: "
    "Pipe mode input channel 'train' timed out waiting for data. InternalServerError: We encountered an internal "
    "error. Please try again.",
    "botocore.exceptions.ClientError: An error occurred (InternalServerError) when calling the GetObject operation: "
    "InternalServerError: We encountered an internal error. Please try again.",
]


@pytest.mark.parametrize("text", AWS_INTERNAL_ERRORS_ELSEWHERE)
def test_an_aws_internal_error_outside_a_checkpoint_upload_is_not_confidently_the_checkpoint_entry(
    matcher: Matcher, text: str
):
    assert not matcher.diagnose(text).confident


def test_an_internal_error_while_saving_a_checkpoint_on_sagemaker_is_still_the_checkpoint_entry(matcher: Matcher):
    d = matcher.diagnose("SageMaker job saving a 30 GB checkpoint to checkpoint_s3_uri ends with InternalServerError: "
                         "We encountered an internal error. Please try again.")
    assert d.best is not None and d.best.entry_id == "sagemaker-checkpoint-internal-error" and d.best.confident
