"""A /trace result as Slack shows it: what a reader of the thread would take from it."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.slack.blocks import over_slack_limits, texts
from tracebot.render.slack import answer, compact_blocks, one_line, parent, result
from tracebot.render.slack_maintainers import audit_line, maintainer_blocks
from tracebot.result import Diagnosis, Frame, Match, Result, StackGroup
from tracebot.store.stats import EntryStats, Gap


def test_a_stack_group_spread_over_many_nodes_says_so_rather_than_naming_four_as_if_they_were_all():
    stuck = Frame("train_step", "/srv/train.py", 99)
    hosts = [f"node-{i:03d}" for i in range(64)]
    group = StackGroup([str(r) for r in range(0, 512, 4)], [stuck], where=stuck, hosts=hosts)
    shown = texts(result(Result("job 4242", "512 ranks on 64 nodes", stack_groups=[group]))[1])
    assert "node-000, node-001, node-002, node-003 (+60 more)" in shown


def test_an_answers_one_line_summary_does_not_stop_at_an_abbreviations_period():
    # cuda-no-kernel-image's answer read "… not compiled for this GPU's architecture (compute capability), e.g."
    summary = ("The installed framework was not compiled for this GPU's architecture, e.g. a wheel without sm_90 "
               "on H100. Rebuild it or install a matching wheel.")
    match = Match("cuda-no-kernel-image", "CUDA error: no kernel image", 100, True, summary=summary, fix=["Rebuild."])
    first = texts(compact_blocks(match, "en")[:1])
    assert first.endswith("a wheel without sm_90 on H100."), first
    assert one_line("Use a smaller batch (i.e. 16) or fewer workers, etc. as needed. Then retry.") == (
        "Use a smaller batch (i.e. 16) or fewer workers, etc. as needed.")


def test_a_japanese_answer_says_where_it_matched_in_japanese():
    # "該当箇所: line 1", "… · score 71 — line 1 · ranks 3, 5 · host node-1 · 4 occurrences": the words around
    # the place were English in a Japanese answer
    match = Match("cuda-oom", "CUDA のメモリ不足", 100, True, kind="anchor", line="CUDA out of memory が出ています",
                  line_no=1, summary="メモリ不足です。", fix=["下げます。"])
    assert texts(compact_blocks(match, "ja")[1:2]) == "該当箇所: 1 行目"
    guess = replace(match, confident=False, ranks=["3", "5"], hosts=["node-1"], occurrences=4)
    listed = texts(answer(Diagnosis([guess], lang="ja"), diagnosis_id=None, always_answer=True)[1])
    assert "— 1 行目 · rank 3, 5 · ホスト node-1 · 4 回" in listed, listed


def test_the_maintainers_app_home_stays_within_slacks_limits_however_many_entries_people_reject():
    # one section over 3,000 characters and Slack refuses the whole Home tab: 60 entries under 50 % helpful
    # (a 1,000-entry knowledge base, a team that votes) listed them all in one section
    flagged = [EntryStats(f"sagemaker-distributed-training-entry-{i:03d}", matched=9, helpful=1, not_this=5)
               for i in range(60)]
    gaps = [Gap("exception: " + "RuntimeError: <built-in method> & " * 8, 40 - i, ["C05F3KJ8RHP"], 0.0, 0.0, "")
            for i in range(5)]
    blocks = maintainer_blocks(flagged=flagged, gaps=gaps, threshold=0.5)
    assert over_slack_limits(blocks, max_blocks=100) == []
    shown = texts(blocks)
    assert "sagemaker-distributed-training-entry-000" in shown and "`tracebot stats` lists the rest" in shown


def test_a_japanese_thread_is_told_the_cascade_after_the_first_failure_in_japanese(matcher):
    """"最初の失敗のあと: 60 watchdog timeouts on 60 ranks follow it。": the line around the cascade was
    Japanese, the cascade itself the matcher's English."""
    from tracebot.render.slack import triage_tail

    log = "\n".join(
        ["node-0: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
        + [f"node-{r // 8}: [rank{r}]:[E ProcessGroupNCCL.cpp:523] [Rank {r}] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran for 600070 milliseconds before timing out."
           for r in range(4, 19)]
        + ["node-0: srun: error: node-0: task 3: Exited with exit code 1"]
    )
    d = matcher.diagnose("学習が途中で止まりました。原因を教えてください。\n" + log + "\n")
    assert d.lang == "ja" and d.first_failure is not None
    said = texts(triage_tail(d))
    assert said == ("最初の失敗のあと: 15 rank でウォッチドッグのタイムアウト 15 件、ランチャーによるプロセス終了 1 件"
                    "がこれに続いています。"), said
    english = texts(triage_tail(matcher.diagnose(log + "\n")))
    assert english == "After the first failure: 15 watchdog timeouts on 15 ranks and 1 launcher exit follow it.", english


def test_every_kind_of_cascade_the_triager_counts_has_a_name_in_every_language():
    from tracebot.matcher.triage import CASCADE_KINDS
    from tracebot.render.messages import LANGS, MESSAGES

    assert [(lang, k) for lang in LANGS if lang != "en" for k in CASCADE_KINDS
            if f"cascade.{k}" not in MESSAGES[lang]] == []


# A hostile program's function name (co_name is any string), a pasted error line, a typed /trace: each sits in
# an inline code span, and each could end it with a backtick or a line break.
SPOOF = "spin` *all ranks healthy* `\n:white_check_mark: *job 4242 finished OK*"


def _spans_hold(text: str) -> bool:
    """Outside code blocks (which hold line breaks, and the line as it was), each line has its backticks in
    pairs and none is the spoofed one."""
    lines = re.sub(r"```.*?```", "", text, flags=re.S).split("\n")
    return all(line.count("`") % 2 == 0 for line in lines) and not any(
        line.startswith(":white_check_mark:") for line in lines)


def test_a_frame_named_to_close_its_code_span_and_start_a_line_of_its_own_stays_inside_the_span():
    frame = Frame(SPOOF, "/srv/evil.py", 7)
    res = Result("job 4242", "2 ranks", stack_groups=[StackGroup(["0", "1"], [frame], where=frame)])
    blocks = result(res)[1]
    head = next(b["text"]["text"] for b in blocks if "stuck in" in b["text"]["text"]).split("\n```")[0]
    assert _spans_hold(head) and "spinˋ *all ranks healthy* ˋ :white_check_mark:" in head, head


def test_a_pasted_line_a_command_and_an_unanswered_error_cannot_end_their_code_spans():
    match = Match("cuda-oom", "CUDA out of memory", 90.0, True, line=f"RuntimeError: {SPOOF}", line_no=3,
                  suggestions=[f"/trace job {SPOOF}"])
    gap = Gap(key=SPOOF, count=3, first_seen=0.0, last_seen=0.0, channels=["C1"], excerpt=SPOOF)
    shown = [texts(compact_blocks(match, "en")), texts(result(Result("x", "y", status="warning", diagnosis=Diagnosis(matches=[match])))[1]),
             texts(maintainer_blocks(flagged=[], gaps=[gap], threshold=0.5)),
             audit_line({"at": 0, "user": "U1", "channel": "C1", "command": "job", "args": SPOOF, "outcome": "ok"}),
             parent(f"job {SPOOF}", "U1", "running…")[0]]
    for text in shown:
        assert _spans_hold(text), text


def test_a_direction_override_in_a_jobs_text_cannot_reverse_tracebots_own_words_after_it():
    # U+202E (right-to-left override) in a frame's function or a job's title runs to the end of its line in
    # Slack, which lays out bidirectional text: "stuck in … (evil.py:7)" and the ranks after it read reversed
    evil = "spin\u202e\u2067"
    frame = Frame(evil, "/srv/evil\u200f.py", 7)
    res = Result(f"job 4242 {evil}", f"ranks 0-7 {evil} stuck", stack_groups=[StackGroup(["0", "1"], [frame], where=frame)])
    text, blocks = result(res)
    shown = text + texts(blocks)
    assert not any(chr(c) in shown for c in (0x202E, 0x2067, 0x200F)), shown
    assert "spin??" in shown


def test_a_title_with_mrkdwn_marks_stays_one_bold_title_in_every_answer():
    # Titles went inside *…* with only &, < and > escaped: a "*" ended the bold early, "~" struck text
    # through, a backtick opened code and an "_" at a word's edge italicised the rest of the line.
    from tracebot.render import slack as render
    from tracebot.result import Diagnosis, Match, Result, Section

    title = "Loss *spikes* to ~inf with `fp16` on _some_ ranks (NCCL_DEBUG)"
    shown = "Loss \u2217spikes\u2217 to \u223cinf with \u02cbfp16\u02cb on \u02cdsome\u02cd ranks (NCCL_DEBUG)"
    m = Match(entry_id="loss-spikes", title=title, score=90, confident=True, summary="s", fix=["lower the lr"])
    unsure = Match(entry_id="loss-spikes", title=title, score=40, confident=False, fix=["lower the lr"])
    said = [
        render.answer(Diagnosis(matches=[m]), diagnosis_id=1, always_answer=True)[1][0]["text"]["text"],
        render.answer(Diagnosis(matches=[unsure]), diagnosis_id=1, always_answer=True)[1][1]["text"]["text"],
        render.answer(Diagnosis(matches=[unsure]), diagnosis_id=1, always_answer=True)[1][2]["elements"][0]["text"],
        render.match_blocks(m)[0]["text"]["text"],
        render.result(Result(title=title, summary="x", sections=[Section(title, "y")]))[1][0]["text"]["text"],
        render.result(Result(title="t", summary="x", sections=[Section(title, "y")]))[1][1]["text"]["text"],
        render.pointer("https://x.slack.com/p1", title)[0],
    ]
    for text in said:
        assert f"*{shown}*" in text, text
        assert text.count("*") == 2, text  # the bold's own two: the title's marks are look-alikes


@pytest.mark.parametrize("text", ["ran `make`", "`x` failed", "`", "a````b", "``", "ends in three```"])
def test_a_code_block_of_text_with_backticks_at_its_ends_or_in_runs_opens_and_closes_with_exactly_three(text):
    # "ran `make`" was ```ran `make```` : four backticks at the end, and a run of four inside kept a whole ```
    from tracebot.render.slack import code

    block = code(text)
    assert block.startswith("```") and block.endswith("```")
    inner = block[3:-3]
    assert "``" not in inner and not inner.startswith("`") and not inner.endswith("`"), block
    assert inner.replace("\u200b", "") == text  # what a reader sees (and copies) is the text itself


def test_guesses_read_in_score_order_in_slack_the_console_the_terminal_and_json_and_the_first_stays_first():
    # the ranking put the likeliest first, but the calibrated scores read "45, 12, 16": the third looked surer
    # than the second. Nobody re-sorts: a later guess is shown at most as sure as the one above it.
    from tracebot.render.blocks_text import blocks_to_text
    from tracebot.render.text import render_diagnosis

    d = Diagnosis(matches=[Match("distributed-hang-py-spy", "Hang", 45.0, False),
                           Match("nccl-system-error-gpu-memory", "NCCL system error", 11.6, False),
                           Match("torchrun-child-failed", "torchrun child failed", 15.6, False)])
    rendered = answer(d, diagnosis_id=None, always_answer=True)
    assert rendered is not None
    slack = texts(rendered[1])
    console = blocks_to_text(rendered[1], rendered[0])
    terminal = render_diagnosis(d)
    scored = re.compile(r"`([a-z0-9-]+)` · score (\d+)")
    expected = [("distributed-hang-py-spy", "45"), ("nccl-system-error-gpu-memory", "12"),
                ("torchrun-child-failed", "12")]
    assert scored.findall(slack) == expected and scored.findall(console) == expected
    assert re.findall(r"\[([a-z0-9-]+)\]  score ([\d.]+)", terminal) == [
        ("distributed-hang-py-spy", "45"), ("nccl-system-error-gpu-memory", "11.6"), ("torchrun-child-failed", "11.6")]
    assert [(m["entry_id"], m["score"], m["score_shown"]) for m in d.to_dict()["matches"]] == [
        ("distributed-hang-py-spy", 45.0, 45.0), ("nccl-system-error-gpu-memory", 11.6, 11.6),
        ("torchrun-child-failed", 15.6, 11.6)]
