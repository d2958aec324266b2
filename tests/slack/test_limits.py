"""Fitting answers into Slack's limits (3,000 characters a section, 50 blocks, 40,000 characters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slack.blocks import over_slack_limits, texts
from tests.slack.tiny_kb import ENTRIES, write_tiny_kb
from tracebot.render.slack import code, section
from tracebot.render.slack_limits import MAX_BLOCKS, MESSAGE_CHARS, SECTION_CHARS, cut, fit


def test_a_long_code_block_is_cut_at_a_line_and_its_fence_closed():
    text = "*Stack*\n" + code(
        "\n".join(f"frame {i} in all_reduce (distributed_c10d.py:{i})" for i in range(300))
    )
    fitted = fit("summary", [section(text)])
    body = fitted.blocks[0]["text"]["text"]
    assert fitted.overflowed and len(body) <= SECTION_CHARS
    assert body.count("```") % 2 == 0, "an open fence would turn the rest of the message into code"
    assert "the full text is in the attached file" in body


def test_more_than_fifty_blocks_keep_the_buttons_and_say_what_was_left_out():
    blocks = [section(f"rank {i}") for i in range(80)] + [{"type": "actions", "elements": []}]
    fitted = fit("summary", blocks)
    assert len(fitted.blocks) == MAX_BLOCKS and fitted.blocks[-1]["type"] == "actions"
    assert "32 more part(s): the full text is in the attached file" in fitted.blocks[-2]["elements"][0]["text"]


def test_a_message_that_fits_is_left_alone():
    blocks = [section("short")]
    fitted = fit("summary", blocks)
    assert not fitted.overflowed and fitted.blocks == blocks and fitted.text == "summary"


def test_the_notification_text_is_kept_under_forty_thousand_characters():
    text, was_cut = cut("x" * 50000, MESSAGE_CHARS)
    assert was_cut and len(text) <= MESSAGE_CHARS


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    """The tiny knowledge base and a grown one's tags: 160 of them, as a team's knowledge base reaches."""
    root = write_tiny_kb(tmp_path / "knowledge")
    words = ["nccl", "checkpoint", "sagemaker", "slurm"] * 4
    for n in range(10):
        entry = ENTRIES["cuda/test-cuda-oom.yaml"].replace("test-cuda-oom", f"test-cuda-oom-{n}")
        tags = ", ".join(f"cluster-{n}{i:02d}-{word}" for i, word in enumerate(words))
        (root / "cuda" / f"test-cuda-oom-{n}.yaml").write_text(entry.replace("tags: [cuda, memory]", f"tags: [{tags}]"))
    return root


def test_a_reply_only_the_caller_sees_is_cut_without_promising_a_file_nobody_attaches(slack):
    # `/trace kb` answers in the slash command's acknowledgement: no file can follow it
    body = slack.command("kb", user="U0ALICE").json()
    shown = texts(body["blocks"])
    assert over_slack_limits(body["blocks"]) == []
    assert "cluster-000-nccl" in shown and "cut" in shown
    assert "attached file" not in shown, "a file was promised"
    assert not slack.fake.calls_to("files.getUploadURLExternal") and not slack.fake.calls_to("files.upload")
