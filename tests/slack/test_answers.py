"""What a reader sees in an answer: short enough that the fix is on the first screen, the values their
own error states, sources they can open, the rest one click away, and their own language."""

from __future__ import annotations

import json

from tests.slack import payloads
from tests.slack.blocks import buttons, texts
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE

FULL_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity of "
    "79.15 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB memory in use."
)


def _answer(slack, text: str) -> dict:
    slack.event(payloads.message(text))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    slack.idle()
    return post


def _blocks(post: dict) -> list[dict]:
    blocks = post["blocks"]
    return json.loads(blocks) if isinstance(blocks, str) else blocks


def test_the_answer_states_what_the_pasted_oom_says_and_puts_the_fix_before_the_buttons(slack):
    post = _answer(slack, f"[rank3]: {FULL_OOM}")
    blocks = _blocks(post)
    text = texts(blocks)
    assert "asked for 20.00 MiB" in text and "GPU 3" in text and "3.06 MiB free" in text
    fix_at = next(i for i, b in enumerate(blocks) if "Lower the per-GPU micro-batch size." in texts([b]))
    buttons_at = next(i for i, b in enumerate(blocks) if b["type"] == "actions")
    assert fix_at < buttons_at <= 4
    # the cause waits behind "Why & all steps"
    assert "more memory than the device has free" not in text
    assert len(post["text"]) < 300


def test_why_and_all_steps_shows_the_cause_and_every_step_to_the_clicker_only(slack):
    msg = payloads.message(f"{OOM_LINE}\n{NCCL_LINE}")
    slack.event(msg)
    answer = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    slack.idle()
    why = buttons(_blocks(answer))["Why & all steps"]
    reply_ts = slack.tracebot.store.recent_diagnoses()[0].reply_ts
    slack.interaction(
        payloads.block_action(
            why["action_id"], why["value"], channel="C0TRAIN", message_ts=reply_ts, thread_ts=msg["ts"], user="U0DAVE"
        )
    )
    call = slack.fake.wait_for(lambda: slack.fake.calls_to("chat.postEphemeral"))[0].params
    slack.idle()
    shown = texts(call["blocks"] if isinstance(call["blocks"], list) else json.loads(call["blocks"]))
    assert call["user"] == "U0DAVE"
    assert "more memory than the device has free" in shown
    assert "expandable_segments" in shown and "Test: NCCL watchdog timeout" in shown
    assert len(slack.fake.posts()) == 1  # nothing new in the thread for everyone


def test_a_suggestion_is_shown_only_with_the_job_id_the_log_names(slack):
    post = _answer(slack, f"slurm-4411.out:\n{NCCL_LINE}")
    footer = texts([b for b in _blocks(post) if b["type"] == "context"])
    assert "Next: `/trace job 4411`" in footer and "&lt;jobid&gt;" not in footer


def test_a_japanese_question_is_answered_in_japanese_with_japanese_buttons(slack):
    post = _answer(slack, f"学習中にこのエラーで落ちました。どうすればいいですか？\n{OOM_LINE}")
    blocks = _blocks(post)
    text = texts(blocks)
    assert "テスト: CUDA のメモリ不足" in text and "GPU ごとのマイクロバッチを下げます。" in text
    assert "Lower the per-GPU" not in text
    assert list(buttons(blocks)) == ["役に立った", "これではない", "原因とすべての手順"]


def test_an_entry_without_a_translation_falls_back_to_english_around_japanese_labels(slack):
    post = _answer(slack, f"ジョブが止まってしまいました。原因はなんでしょうか？\n{NCCL_LINE}")
    text = texts(_blocks(post))
    assert "Test: NCCL watchdog timeout" in text and "対処" in text
    assert "役に立った" in text
