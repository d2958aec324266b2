"""``tracebot console`` and ``tracebot stats`` as a user runs them: the real CLI, a scripted conversation."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE
from tracebot.console import ConsoleOutbox

REPO = Path(__file__).resolve().parents[2]


def tracebot(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TRACEBOT_"))}
    base["TRACEBOT_LOAD_ENTRYPOINTS"] = "0"
    return subprocess.run(
        [sys.executable, "-m", "tracebot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**base, **(env or {})},
    )


def test_a_scripted_console_conversation_shows_what_slack_would_get(kb_dir, tmp_path):
    log = tmp_path / "node7.log"
    log.write_text("step 1 loss 2.0\n" * 50 + f"[rank5]: {NCCL_LINE}\n")
    script = "\n".join(
        [
            "/trace help",
            "anyone seen this?",
            f"[rank3]: {OOM_LINE}",
            "---",
            "/click not-this",
            "the loss curve looks fine",
            "---",
            f"/attach {log}",
            "here is the log",
            "---",
            "/trace config threshold 80",
            "/quit",
        ]
    )
    db = tmp_path / "console.sqlite3"
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(db), stdin=script)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "/trace diagnose <error text>" in out
    first_message_ts = re.findall(r"── you → #C0CONSOLE \[(\d+\.\d{6})\]", out)[0]
    answer = out.split(f"tracebot → #C0CONSOLE (thread {first_message_ts})")[1]
    assert "Test: CUDA out of memory" in answer and "rank 3" in answer and "line 2" in answer
    assert "[Helpful]  [Not this]" in answer
    assert "Noted as not this one" in out
    # Each message the user sends opens a turn; what tracebot did about it follows, up to the next one.
    _, _, loss_curve_turn, log_turn = out.split("── you → #C0CONSOLE")
    assert "(tracebot says nothing" in loss_curve_turn and "tracebot → #C0CONSOLE" not in loss_curve_turn
    assert "Test: NCCL watchdog timeout" in log_turn and "line 51 · rank 5" in log_turn
    assert re.search(r"^threshold +80\b", log_turn, re.MULTILINE), "the channel's threshold is now 80"

    stats = tracebot("stats", "--db", str(db), "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    by_id = {e["entry_id"]: e for e in data["entries"]}
    assert by_id["test-cuda-oom"]["matched"] == 1 and by_id["test-cuda-oom"]["not_this"] == 1
    assert data["not_this"][0]["line"].startswith("[rank3]: torch.OutOfMemoryError")
    table = tracebot("stats", "--db", str(db))
    assert "test-cuda-oom" in table.stdout and '"Not this" feedback' in table.stdout


def test_a_second_console_session_on_the_same_database_still_answers(kb_dir, tmp_path):
    # The store remembers answered messages by channel and ts; a session that reused the first one's
    # timestamps was silently treated as a redelivery.
    db = tmp_path / "again.sqlite3"
    for session in (1, 2):
        done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(db), stdin=f"{OOM_LINE}\n")
        assert done.returncode == 0, done.stderr
        assert "Test: CUDA out of memory" in done.stdout, f"session {session} got no answer"


def test_run_without_slack_credentials_starts_the_console(kb_dir):
    db = kb_dir.parent / "run.sqlite3"
    done = tracebot(
        "run", stdin=f"{OOM_LINE}\n", env={"TRACEBOT_KNOWLEDGE": str(kb_dir), "TRACEBOT_DB": str(db)}
    )
    assert done.returncode == 0, done.stderr
    assert "starting the console" in done.stderr
    assert "Test: CUDA out of memory" in done.stdout
    stats = tracebot("stats", "--db", str(db), "--json")
    assert json.loads(stats.stdout)["entries"][0]["entry_id"] == "test-cuda-oom", "the console kept its store"


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP)"),
        ({"SLACK_APP_TOKEN": "xapp-1"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_SIGNING_SECRET": "s3cret"}, "SLACK_BOT_TOKEN"),
    ],
)
def test_run_with_half_a_slack_configuration_refuses_and_names_what_is_missing(kb_dir, env, missing):
    done = tracebot("run", stdin=f"{OOM_LINE}\n", env={"TRACEBOT_KNOWLEDGE": str(kb_dir), **env})
    assert done.returncode != 0, "a process manager must see the failed start"
    assert f"but {missing} is not" in done.stderr and next(iter(env)) in done.stderr
    assert "console" not in done.stdout and "Test: CUDA out of memory" not in done.stdout
    assert list(env.values())[0] not in done.stderr, "the secret itself is never printed"


def test_stats_on_a_corrupt_database_says_so_and_fails(tmp_path):
    db = tmp_path / "bad.sqlite3"
    db.write_bytes(b"garbage" * 1000)
    done = tracebot("stats", "--db", str(db))
    assert done.returncode == 2 and "corrupt" in done.stderr


def test_the_console_diagnoses_what_was_typed_not_what_slack_markup_would_make_of_it(kb_dir, tmp_path):
    # Slack escapes &, < and > in what a user types, and tracebot undoes that; text typed at the console was
    # never escaped, so a link's markup, an entity or a tag must reach the matcher (and the answer) as typed.
    typed = "torch.OutOfMemoryError: CUDA out of memory (see <https://wiki.example/oom|the wiki> &amp; <b>retry</b>)"
    script = "\n".join([typed, "---", f"/trace diagnose {typed}", "/quit"])
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"), stdin=script)
    assert done.returncode == 0, done.stderr
    quoted = [line for line in done.stdout.splitlines() if line.startswith("*What it says:*")]
    assert len(quoted) == 2, done.stdout  # the message's answer and /trace diagnose's
    assert all(f"`{typed}`" in line for line in quoted), quoted


def test_diagnose_asked_by_mention_is_answered_on_the_text_as_typed(kb_dir, tmp_path):
    # "@tracebot diagnose …" undid Slack's escaping twice (once for the mention, again for the answer): "&amp;"
    # typed was quoted back as "&", "&lt;b&gt;" as "<b>" (in Slack as at the console)
    typed = "torch.OutOfMemoryError: CUDA out of memory (see &amp; &lt;b&gt; <b>retry</b> <https://x|y>)"
    script = "\n".join([f"@tracebot diagnose {typed}", "/quit"])
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"), stdin=script)
    assert done.returncode == 0, done.stderr
    quoted = [line for line in done.stdout.splitlines() if line.startswith("*What it says:*")]
    assert quoted == [f"*What it says:* `{typed}`"], done.stdout


def test_a_knowledge_search_shows_and_searches_the_words_as_typed(kb_dir, tmp_path):
    # Slack escapes &, < and > in a command's text as in a message's; /trace kb used its text unescaped, so
    # "a<b" typed was searched for and shown back as "a&lt;b" (in Slack, and at the console since it sends as
    # Slack does)
    script = "\n".join(["/trace kb memory a<b&c", "/trace kb out of memory &", "/quit"])
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"), stdin=script)
    assert done.returncode == 0, done.stderr
    assert "*/trace kb memory a<b&c*" in done.stdout and "*/trace kb out of memory &*" in done.stdout, done.stdout
    assert "&lt;" not in done.stdout and "&amp;" not in done.stdout, done.stdout


def test_a_source_linked_by_its_own_address_reads_as_the_address_as_in_slack(kb_dir, tmp_path):
    # Slack shows <https://…> as the link itself; the console printed the angle brackets of the markup
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"),
                    stdin=f"{OOM_LINE}\n---\n/quit")
    assert done.returncode == 0, done.stderr
    assert "Source: https://pytorch.org/docs/stable/notes/cuda.html#memory-management" in done.stdout, done.stdout
    assert "<https://" not in done.stdout


def test_an_html_page_that_cannot_be_written_is_refused_before_the_conversation_not_after_it(kb_dir, tmp_path):
    # the page was written at the end: a mistyped folder cost the whole conversation and printed a traceback
    for where, why in ((tmp_path / "no-such-dir" / "chat.html", "no such folder"), (tmp_path, "a directory")):
        done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"),
                        "--html", str(where), stdin=f"{OOM_LINE}\n---\n/quit")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"--html {where}: {why}" in done.stderr and "you →" not in done.stdout


def test_an_uploaded_picture_is_named_in_the_console_not_printed_as_bytes():
    # /trace job on more than 8 ranks uploads ranks.png: the console printed its first 400 bytes as text
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x04\xb0" + bytes(range(256)) * 4
    out = io.StringIO()
    ConsoleOutbox(out).upload("C0CONSOLE", "1.0", "job-4242-ranks.png", png, "Ranks by stack group")
    shown = out.getvalue()
    assert "job-4242-ranks.png" in shown and "not text" in shown, shown
    assert "PNG" not in shown and "\x00" not in shown and "\ufffd" not in shown, shown


@pytest.mark.parametrize("ending", ["---\n/quit\n", ""], ids=["dashes", "end-of-input"])
def test_a_log_attached_alone_is_answered(kb_dir, tmp_path, ending):
    # The console says "end with --- to send it alone"; the file alone used to be dropped without a word.
    log = tmp_path / "node7.log"
    log.write_text("step 1 loss 2.0\n" * 50 + f"[rank5]: {NCCL_LINE}\n")
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"),
                    stdin=f"/attach {log}\n{ending}")
    assert done.returncode == 0, done.stderr
    turn = done.stdout.partition("── you → #C0CONSOLE")[2]
    assert "0 line(s), 1 file(s)" in turn
    assert "Test: NCCL watchdog timeout" in turn and "line 51 · rank 5" in turn


def test_dashes_with_nothing_to_send_send_nothing(kb_dir, tmp_path):
    done = tracebot("console", "--knowledge", str(kb_dir), "--db", str(tmp_path / "c.sqlite3"),
                    stdin="---\n---\n/quit\n")
    assert done.returncode == 0, done.stderr
    assert "── you →" not in done.stdout
