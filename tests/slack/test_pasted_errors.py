"""Pasted errors and attached logs in channels: answered in the thread when confident, silent otherwise."""

from __future__ import annotations

import dataclasses
import gzip
import random

from tests.slack import payloads
from tests.slack.blocks import buttons, texts
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE


def test_a_pasted_oom_gets_the_entry_fix_and_buttons_in_the_thread_of_the_message(slack):
    msg = payloads.message(f"anyone seen this?\n```[rank3]: {OOM_LINE}```")
    assert slack.event(msg).status == 200
    post = slack.fake.wait_for(lambda: slack.fake.posts("C0TRAIN"))[0]
    assert post["thread_ts"] == msg["ts"]
    text = texts(post["blocks"])
    assert "Test: CUDA out of memory" in text
    assert "line 2" in text and "rank 3" in text
    assert "Lower the per-GPU micro-batch size." in text
    assert "pytorch.org/docs/stable/notes/cuda.html" in text
    # No job id in the paste: a "Next:" command with <jobid> left in it could not be run as shown.
    assert "/trace job" not in text and "&lt;jobid&gt;" not in text
    assert list(buttons(post["blocks"])) == ["Helpful", "Not this", "Why & all steps"]
    slack.idle()
    record = slack.tracebot.store.recent_diagnoses("C0TRAIN")[0]
    assert record.matches[0].entry_id == "test-cuda-oom" and record.thread_ts == msg["ts"]


def test_an_ordinary_message_gets_no_reply(slack):
    slack.event(payloads.message("the loss curve looks good today, lr warmup done"))
    slack.idle()
    assert slack.fake.posts() == []


def test_a_reply_inside_a_thread_is_answered_in_that_thread(slack):
    parent = payloads.new_ts()
    msg = payloads.message(NCCL_LINE, thread_ts=parent)
    slack.event(msg)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == parent


def test_edits_bot_messages_and_tracebots_own_messages_are_ignored(slack):
    edited = payloads.message(
        "",
        subtype="message_changed",
        message={"type": "message", "text": OOM_LINE, "user": "U0ALICE", "ts": "1.1"},
    )
    edited.pop("user")
    other_bot = payloads.message(OOM_LINE, subtype="bot_message", bot_id="B0OTHER")
    own = payloads.message(OOM_LINE, user="UTRACEBOT", bot_id="B0001")
    for event in (edited, other_bot, own):
        assert slack.event(event).status == 200
    slack.idle()
    assert slack.fake.posts() == []


def test_an_event_delivered_twice_is_answered_once(slack):
    msg = payloads.message(OOM_LINE)
    slack.event(msg, event_id="Ev0DUPLICATE1")
    slack.event(
        msg,
        event_id="Ev0DUPLICATE1",
        headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
    )
    slack.event(msg, event_id="Ev0OTHERSOCKET")  # same message through another connection
    slack.idle()
    assert len(slack.fake.posts()) == 1


def test_the_same_error_again_in_the_thread_gets_a_pointer_to_the_first_answer(slack):
    root = payloads.new_ts()
    slack.event(payloads.message(OOM_LINE, thread_ts=root))
    first = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    slack.idle()
    slack.event(payloads.message(f"again: {OOM_LINE}", thread_ts=root))
    posts = slack.fake.wait_for(lambda: len(slack.fake.posts()) == 2 and slack.fake.posts())
    slack.idle()
    pointer = posts[1]
    assert pointer["thread_ts"] == root
    assert len(pointer["blocks"]) == 1 and "earlier answer" in pointer["text"]
    first_ts = slack.fake.calls_to("chat.getPermalink")[0].params["message_ts"]
    assert first_ts.replace(".", "") in pointer["text"]
    assert "Lower the per-GPU" in texts(first["blocks"])
    # In another thread the same error is answered in full.
    slack.event(payloads.message(OOM_LINE))
    posts = slack.fake.wait_for(lambda: len(slack.fake.posts()) == 3 and slack.fake.posts())
    assert "Lower the per-GPU" in texts(posts[2]["blocks"])


def test_the_same_error_again_in_a_japanese_thread_gets_the_pointer_in_japanese(slack):
    root = payloads.new_ts()
    question = "学習中にこのエラーで落ちました。どうすればいいですか？"
    slack.event(payloads.message(f"{question}\n{OOM_LINE}", thread_ts=root))
    slack.fake.wait_for(lambda: slack.fake.posts())
    slack.idle()
    slack.event(payloads.message(f"{question}\n{OOM_LINE}", thread_ts=root))
    pointer = slack.fake.wait_for(lambda: len(slack.fake.posts()) == 2 and slack.fake.posts())[1]
    assert "上と同じエラーです: *テスト: CUDA のメモリ不足*" in pointer["text"] and "先ほどの回答" in pointer["text"]
    assert "Same error" not in pointer["text"] and "earlier answer" not in pointer["text"]


def test_an_attached_gzipped_log_is_downloaded_with_the_bot_token_and_diagnosed(slack):
    log = ("step 100 loss 2.3\n" * 2000 + f"[rank5]: {NCCL_LINE}\n").encode()
    url = slack.fake.add_file("train-node7.log.gz", gzip.compress(log))
    files = [payloads.slack_file("train-node7.log.gz", url, 999, "application/gzip", "gzip")]
    slack.event(payloads.file_share("job 4411 died", files))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    text = texts(post["blocks"])
    assert "Test: NCCL watchdog timeout" in text and "line 2001" in text


def test_a_log_shared_from_another_organisation_is_looked_up_by_its_id_and_diagnosed(slack):
    # Slack Connect: the event names the file by id only; its name, type and URL come from files.info.
    log = ("step 100 loss 2.3\n" * 50 + f"[rank5]: {NCCL_LINE}\n").encode()
    file = payloads.slack_file("train-node7.log", slack.fake.add_file("train-node7.log", log), len(log))
    slack.fake.file_objects[file["id"]] = file
    msg = payloads.file_share("", [payloads.connect_file(file)], channel_type="channel")
    slack.event(msg)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert post["thread_ts"] == msg["ts"]
    assert "Test: NCCL watchdog timeout" in texts(post["blocks"]) and "line 51" in texts(post["blocks"])


def test_a_shared_file_slack_will_not_describe_is_said_to_be_unreadable_to_whoever_asked(slack):
    event = payloads.mention("what killed this run?")
    event["files"] = [{"id": "F0GONE", "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": ""}]
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    shown = texts(post["blocks"])
    assert "`F0GONE`: could not be read (Slack would not say where it is: file_not_found)" in shown, shown
    assert "not a text or log file" not in shown


def test_a_shared_log_over_the_size_cap_is_not_downloaded_and_one_note_says_why_it_got_no_answer(slack):
    # Silence would read as "nothing known in it": the log was never read.
    url = slack.fake.add_file("huge.log", OOM_LINE.encode())
    files = [payloads.slack_file("huge.log", url, 60 * 1024 * 1024)]
    msg = payloads.file_share("", files)
    slack.event(msg)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    slack.idle()
    assert post["thread_ts"] == msg["ts"] and len(slack.fake.posts()) == 1
    assert "I could not read all of the attached log" in post["text"]
    assert "`huge.log`: skipped, larger than 50 MB" in texts(post["blocks"])
    assert "Test: CUDA out of memory" not in post["text"]  # its size, as Slack gave it, kept it from being fetched


def test_a_japanese_thread_is_told_in_japanese_why_its_log_was_not_read(slack):
    """The note under "添付のログをすべては読めなかった…" was English ("huge.log: skipped, larger than 50 MB")."""
    url = slack.fake.add_file("huge.log", OOM_LINE.encode())
    msg = payloads.file_share("学習が落ちました。ログを添付します", [payloads.slack_file("huge.log", url, 60 * 1024 * 1024)])
    slack.event(msg)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "添付のログをすべては読めなかった" in post["text"]
    assert "`huge.log`: 50 MB を超えるため読んでいません" in post["text"] and "skipped" not in post["text"]
    assert "`huge.log`: 50 MB を超えるため読んでいません" in texts(post["blocks"]) and "skipped" not in texts(post["blocks"])


def test_a_japanese_question_with_an_english_log_attached_is_answered_in_japanese(slack):
    """The labels followed the question, but what the entry says (its title, summary and fix) followed the
    English log it was found in: a Japanese thread read the answer in English under Japanese headings."""
    log = ("step 100 loss 2.3\n" * 50 + f"[rank5]: {OOM_LINE}\n").encode()
    url = slack.fake.add_file("train.log", log)
    slack.event(payloads.file_share("学習が落ちました。ログを添付します", [payloads.slack_file("train.log", url, len(log))]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "テスト: CUDA のメモリ不足" in texts(post["blocks"]), texts(post["blocks"])
    assert "Test: CUDA out of memory" not in texts(post["blocks"])


def test_the_notes_under_a_japanese_answer_are_in_japanese(slack):
    junk = random.Random(4).randbytes(64 << 10)
    url = slack.fake.add_file("core.log", junk)
    question = "学習中にこのエラーで落ちました。どうすればいいですか？"
    event = payloads.mention(f"{question}\n{OOM_LINE}")
    event["files"] = [payloads.slack_file("core.log", url, len(junk))]
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    shown = texts(post["blocks"])
    assert "テスト: CUDA のメモリ不足" in shown
    assert "`core.log`: テキストファイルではない (バイナリ) ため読んでいません" in shown and "skipped" not in shown


def test_a_shared_binary_log_gets_one_note_in_the_thread_and_a_shared_image_none(slack):
    junk = random.Random(4).randbytes(64 << 10)
    url = slack.fake.add_file("core.log", junk)
    slack.event(payloads.file_share("rank 3 left this", [payloads.slack_file("core.log", url, len(junk))]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`core.log`: skipped, not a text file (binary content)" in texts(post["blocks"])
    slack.idle()
    image = slack.fake.add_file("loss.png", b"\x89PNG")
    slack.event(payloads.file_share("loss curve", [payloads.slack_file("loss.png", image, 4, "image/png", "png")]))
    slack.idle()
    assert len(slack.fake.posts()) == 1


def test_a_file_name_in_a_note_is_shown_as_its_name_not_as_formatting(slack):
    # The name is the uploader's text: "*final*-~run~-`3`.log" made the note's name bold and code in Slack.
    junk = random.Random(4).randbytes(64 << 10)
    name = "*final*-~run~-`3`.log"
    url = slack.fake.add_file(name, junk)
    slack.event(payloads.file_share("", [payloads.slack_file(name, url, len(junk))]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`*final*-~run~-\u02cb3\u02cb.log`: skipped, not a text file" in texts(post["blocks"])
    assert "`*final*-~run~-\u02cb3\u02cb.log`: skipped, not a text file" in post["text"]


def test_an_empty_or_blank_shared_log_is_said_to_be_empty_not_passed_over_or_matched_to_nothing(slack):
    # A job's .err file attached before anything was written to it: shared alone it got silence (as if
    # read and nothing known found), and asked about it got "closest guesses" ranked against blank lines.
    empty = slack.fake.add_file("slurm-4411.err", b"")
    slack.event(payloads.file_share("rank 3 died", [payloads.slack_file("slurm-4411.err", empty, 0)]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`slurm-4411.err`: empty or blank: there is nothing in it to read" in texts(post["blocks"])
    blank = slack.fake.add_file("train.log.gz", gzip.compress(b"\n\n   \n"))
    slack.event(payloads.mention("what is wrong here?", files=[payloads.slack_file("train.log.gz", blank, 30)]))
    post = slack.fake.wait_for(lambda: slack.fake.posts()[1:])[0]
    assert "`train.log.gz`: empty or blank: there is nothing in it to read" in texts(post["blocks"])
    slack.idle()
    assert slack.tracebot.store.recent_diagnoses("C0TRAIN")[0].matches == []


def test_a_shared_results_table_or_archive_too_large_to_read_gets_no_note_about_a_log(slack):
    # Channel talk shares metrics tables, notebooks and archives as often as logs: nothing went wrong in
    # them, so "I could not read all of the attached log, so I cannot say what went wrong" is noise there.
    shared = [("results.csv", "text/csv", "csv"), ("run.ipynb", "application/json", "json"),
              ("ckpt.tar.gz", "application/gzip", "gzip"), ("config.yaml", "text/plain", "yaml")]
    for name, mimetype, filetype in shared:
        url = slack.fake.add_file(name, OOM_LINE.encode())
        slack.event(payloads.file_share("from last night", [payloads.slack_file(name, url, 60 << 20, mimetype, filetype)]))
    slack.idle()
    assert slack.fake.posts() == []
    url = slack.fake.add_file("slurm-4411.out.gz", OOM_LINE.encode())  # a log, gzipped: still one note
    slack.event(payloads.file_share("", [payloads.slack_file("slurm-4411.out.gz", url, 60 << 20, "application/gzip", "gzip")]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`slurm-4411.out.gz`: skipped, larger than 50 MB" in texts(post["blocks"])


def test_a_shared_log_a_crash_padded_with_nuls_is_read_whole_and_gets_no_note_that_it_was_not(slack):
    # The log is read to its end (the scanner reads past NUL runs); with nothing known in it, the thread
    # stays quiet, as for any log: "I could not read all of the attached log" would be untrue.
    log = b"epoch 3 step 120 loss 2.31\n" * 100_000 + b"\0" * (1 << 20)
    url = slack.fake.add_file("train.log", log)
    slack.event(payloads.file_share("last night's run", [payloads.slack_file("train.log", url, len(log))]))
    slack.idle()
    assert slack.fake.posts() == []


def test_an_image_attachment_is_not_downloaded(slack):
    url = slack.fake.add_file("screenshot.png", b"\x89PNG")
    files = [payloads.slack_file("screenshot.png", url, 4, "image/png", "png")]
    slack.event(payloads.file_share("", files))
    slack.idle()
    assert slack.fake.posts() == []


def test_a_log_slack_serves_as_its_sign_in_page_is_reported_unread_not_diagnosed(slack):
    # Without the files:read scope Slack answers a file URL with its sign-in page (HTML, status 200).
    slack.fake.files_scope = False
    url = slack.fake.add_file("train.log", f"[rank5]: {NCCL_LINE}\n".encode())
    files = [payloads.slack_file("train.log", url, 200)]
    slack.event(payloads.mention("why did this die?", files=files))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    text = texts(post["blocks"])
    assert "`train.log`: could not be read" in text and "files:read" in text


def test_a_binary_attachment_is_said_to_be_no_text_file_not_diagnosed_as_a_log(slack):
    # compressed or random bytes: about 0.4 % NULs, under the scanner's 1 %, so its noise was read as lines
    junk = random.Random(4).randbytes(256 << 10)
    url = slack.fake.add_file("dump.log", junk)
    slack.event(payloads.mention("what is wrong here?", files=[payloads.slack_file("dump.log", url, len(junk))]))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    shown = texts(post["blocks"])
    assert "`dump.log`: skipped, not a text file (binary content)" in shown
    slack.idle()
    assert slack.tracebot.store.recent_diagnoses("C0TRAIN")[0].matches == []


def test_an_attachment_found_over_the_cap_while_downloading_is_said_to_be_skipped_as_too_large(slack):
    # Slack's size said 100 bytes; the download finds more than the cap: the same note as a file Slack said was big
    slack.tracebot.limits = dataclasses.replace(slack.tracebot.limits, max_file_bytes=1 << 20)
    url = slack.fake.add_file("grown.log", b"x" * ((1 << 20) + 10))
    event = payloads.mention("what is wrong here?")
    event.update({"files": [payloads.slack_file("grown.log", url, 100)]})
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`grown.log`: skipped, larger than 1 MB" in texts(post["blocks"])


def test_a_cap_under_a_megabyte_is_said_in_kilobytes_not_as_zero_megabytes(slack):
    # TRACEBOT_MAX_FILE_MB=0.5: the note said "larger than 0 MB", which reads as "any file is too large"
    slack.tracebot.limits = dataclasses.replace(slack.tracebot.limits, max_file_bytes=512 << 10)
    url = slack.fake.add_file("half.log", b"x" * ((512 << 10) + 10))
    event = payloads.mention("what is wrong here?")
    event.update({"files": [payloads.slack_file("half.log", url, (512 << 10) + 10)]})
    slack.event(event)
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`half.log`: skipped, larger than 512 KB" in texts(post["blocks"])
