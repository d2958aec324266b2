"""What leaves tracebot for Slack: no secret of any kind, no live mrkdwn from user text, and the bot
token only for Slack's own file host. Every recorded call to the fake Slack is inspected: messages,
edits, ephemerals, file uploads (name, title, content), the App Home, and the slash-command acks."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import SIGNING_SECRET
from tests.slack.plugins_for_tests import EchoPlugin
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE
from tracebot.markup import as_slack_sends

# One of each kind; the value is what must never be seen, the text is how it appears in a log.
SECRETS = {
    "slack bot token": ("xoxb-2024-1234567890-LeakedBotTokenValue", "xoxb-2024-1234567890-LeakedBotTokenValue"),
    "slack user token": ("xoxp-99-88-LeakedUserToken", "export TOKEN_FOR_BOT=xoxp-99-88-LeakedUserToken"),
    "slack app token": ("xapp-1-A0LEAK-123-abcdef", "xapp-1-A0LEAK-123-abcdef"),
    "signing secret": (SIGNING_SECRET, f"signing with {SIGNING_SECRET}"),
    "aws key id": ("AKIAZ7QX3LEAKTEST123", "aws_access_key_id AKIAZ7QX3LEAKTEST123"),
    "aws secret key": ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKTEST99", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKTEST99"),
    "hugging face": ("hf_LeakLeakLeakLeakLeakLeakLeakLeak12", "login hf_LeakLeakLeakLeakLeakLeakLeakLeak12"),
    "github classic": ("ghp_LeakLeakLeakLeakLeakLeakLeakLeak1234", "ghp_LeakLeakLeakLeakLeakLeakLeakLeak1234"),
    "github fine-grained": ("github_pat_11LEAK0_LeakLeakLeakLeakLeak", "github_pat_11LEAK0_LeakLeakLeakLeakLeak"),
    "wandb key": ("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "WANDB_API_KEY=0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"),
    "bearer": ("eyJleak.bearer.Token99", "Authorization: Bearer eyJleak.bearer.Token99"),
    "password pair": ("hunter2-leaked", "DB_PASSWORD: hunter2-leaked"),
    "api key pair": ("sk-leaked-api-key-42", "OPENAI_API_KEY=sk-leaked-api-key-42"),
    "jwt": ("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJsZWFrZWQifQ.c2lnTGVha2VkMTIz",
            "curl -H 'X-Auth: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJsZWFrZWQifQ.c2lnTGVha2VkMTIz' https://api"),
    "libpq password": ("hunter3-leaked", "PGPASSWORD=hunter3-leaked psql -h db1"),
    "quoted passphrase": ("horse battery staple", 'password: "correct horse battery staple"'),
    "private key": ("MIIEowIBAAKCAQEAleakedKeyBody0123456789",
                    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAleakedKeyBody0123456789\n-----END RSA PRIVATE KEY-----"),
}
LEAKY_LINES = [f"{OOM_LINE} {text}" for _value, text in SECRETS.values()]
HOSTILE = "<!here> <!channel> <!group> <https://evil.example/login|slack.com/sso> & more"
LIVE_MARKUP = ("<!here>", "<!channel>", "<!group>", "<https://evil.example")


@pytest.fixture
def echo(plugin_host) -> Iterator[None]:
    host, _slow = plugin_host
    plugin = EchoPlugin()
    host.register(plugin, name="test-echo")
    yield
    host.unregister(plugin)


def _leaks(sent: str) -> list[str]:
    return [kind for kind, (value, _text) in SECRETS.items() if value in sent]


def _file_message(name: str, url: str, size: int, text: str = "", **kw: Any) -> dict[str, Any]:
    return payloads.file_share(text, [payloads.slack_file(name, url, size)], **kw)


def test_no_secret_of_any_kind_reaches_slack_through_any_command_or_reply(slack, echo, debug_log):
    log = debug_log(slack.config)
    leaky = "\n".join(LEAKY_LINES)
    fake = slack.fake
    acks = []
    slack.event(payloads.message(leaky))  # auto answer: evidence line, fallback text
    slack.event(payloads.mention(leaky))  # always answered
    slack.event(payloads.message(leaky, channel="D0ALICE", channel_type="im"))
    gz = gzip.compress(leaky.encode())
    for name, content in ((f"{SECRETS['hugging face'][0]}.log", leaky.encode()), ("run.log.gz", gz)):
        slack.event(_file_message(name, fake.add_file(name, content), len(content), channel="D0ALICE",
                                  channel_type="im"))
    acks.append(slack.command(f"echo {leaky}"))  # a plugin's Result in every part, progress, attachment
    acks.append(slack.command(f"diagnose {leaky}"))
    acks.append(slack.command(SECRETS["slack bot token"][0]))  # "Unknown command `xoxb-…`" in the ack
    acks.append(slack.command(f"kb {leaky}"))
    slack.event(payloads.home_opened())
    slack.idle()

    sent = fake.everything_sent() + "\n".join(a.body for a in acks)
    assert len(fake.posts()) >= 8 and fake.uploads, "every path posted something"
    assert "[redacted]" in sent
    assert _leaks(sent) == []
    assert _leaks(log.getvalue()) == [], "the DEBUG log (Bolt and slack_sdk dump payloads) is scrubbed too"


def test_a_secret_at_the_end_of_a_quoted_line_is_redacted_without_its_closing_backticks(slack):
    # The scrubber took a value up to the next space: the matched line quoted in the answer (`…`) and in
    # "Why & all steps" (```…```) lost its closing backticks with the password, and Slack showed the
    # fence as text.
    for leak in ("password=hunter2-leaked", "Authorization: Basic aHVudGVyMi1sZWFrZWQ="):
        msg = payloads.message(f"{OOM_LINE} {leak}")
        slack.event(msg)
        answer = slack.fake.wait_for(lambda ts=msg["ts"]: [p for p in slack.fake.posts() if p["thread_ts"] == ts])[0]
        slack.idle()
        why = next(e for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]
                   if e["action_id"] == "tracebot_why_all_steps")
        reply_ts = slack.tracebot.store.recent_diagnoses()[0].reply_ts
        slack.interaction(payloads.block_action(why["action_id"], why["value"], channel="C0TRAIN",
                                                message_ts=reply_ts, thread_ts=msg["ts"]))
        slack.idle()
    ephemerals = [c.params for c in slack.fake.calls_to("chat.postEphemeral")]
    assert len(ephemerals) == 2
    for params in ephemerals:
        blocks = params["blocks"] if isinstance(params["blocks"], list) else json.loads(params["blocks"])
        quoted = [t for t in texts(blocks).split("\n") if "[redacted]" in t]
        assert quoted and all(t.count("```") == 2 and t.endswith("[redacted]```") for t in quoted), quoted
    assert "hunter2" not in slack.fake.everything_sent() and "aHVudGVy" not in slack.fake.everything_sent()


def test_user_text_reaches_slack_as_text_never_as_a_mention_or_a_disguised_link(slack, echo):
    fake = slack.fake
    # typed: Slack escapes &, < and > (the markup characters reach tracebot as text); and a real @here or
    # link, which Slack sends as live markup: tracebot reads "@here" and the link's label
    typed = as_slack_sends(HOSTILE)
    acks = [slack.command(f"echo {typed}"), slack.command(f"diagnose {OOM_LINE} {typed}"),
            slack.command(f"job {typed}"), slack.command(f"echo {HOSTILE}")]
    slack.event(payloads.message(f"{OOM_LINE} {HOSTILE}"))
    slack.event(payloads.mention(f"{HOSTILE} why?"))
    name = f"{HOSTILE}.log"
    slack.event(_file_message(name, "https://elsewhere.example/x.log", 10, channel="D0ALICE", channel_type="im"))
    slack.idle()

    calls = [c for c in fake.calls if c.method in ("chat.postMessage", "chat.update", "chat.postEphemeral")]
    updates = [c for c in calls if c.method == "chat.update"]
    assert updates and any("&lt;!here&gt;" in c.params["text"] for c in updates), "the parent message says it"
    for call in calls:
        shown = call.params.get("text", "") + texts(call.params.get("blocks") or [])
        assert not [m for m in LIVE_MARKUP if m in shown], (call.method, shown)
    for ack in acks:
        assert not [m for m in LIVE_MARKUP if m in ack.body], ack.body
    escaped = "&lt;https://evil.example/login|slack.com/sso&gt;"
    assert any(escaped in c.params.get("text", "") for c in calls), "the fallback text escapes it too"


def test_an_uploaded_logs_unknown_first_failure_reaches_the_notification_as_text_never_as_a_mention_or_link(slack):
    # A file's text is not flattened by Slack as a typed message is: its markup arrives live. The log's
    # first failure (an error no entry knows, then every other rank's watchdog) opens the fallback text.
    mention = "<@U0BOSS>"
    lines = [f"[rank3]: ValueError: shard 17 is corrupt {mention} {HOSTILE}"]
    lines += [f"[rank{r}]: " + NCCL_LINE.replace("[Rank 5]", f"[Rank {r}]") for r in range(8) if r != 3]
    log = "\n".join(lines).encode()
    url = slack.fake.add_file("train.log", log)
    slack.event(_file_message("train.log", url, len(log), text="why?", channel="D0ALICE", channel_type="im"))
    post = slack.fake.wait_for(lambda: slack.fake.posts("D0ALICE"))[0]
    slack.idle()

    assert post["text"].startswith("First failure: [rank3]: ValueError: shard 17 is corrupt")
    shown = post["text"] + texts(post["blocks"])
    assert not [m for m in (*LIVE_MARKUP, mention) if m in shown], shown
    assert "&lt;@U0BOSS&gt; &lt;!here&gt;" in post["text"], "the notification shows what the log says"


def test_a_slash_command_with_one_huge_word_is_acknowledged_and_audited_with_its_secret_scrubbed(slack):
    # The audit scrubs the command's words before Slack gets its acknowledgement. A word of name characters
    # with a '-' every other character ("a-a-a-…", a log line's run) was scrubbed in quadratic time: this one
    # would have held the acknowledgement for most of an hour (Slack gives up after 3 s).
    word = "a-" * 150_000
    ack = slack.command(f"diagnose DB_PASSWORD=hunter2-leaked {word}")
    slack.idle()

    assert ack.status == 200
    row = slack.tracebot.store.audit(limit=1)[0]
    assert row["args"].startswith("DB_PASSWORD=[redacted] a-a-a-") and "hunter2" not in row["args"]
    assert "hunter2-leaked" not in slack.fake.everything_sent()


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers))
        body = f"{OOM_LINE}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _other_server() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A loopback server on another port that records the headers of every request it gets."""
    seen: list[dict[str, str]] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Rec", (_Recorder,), {"seen": seen}))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _dm_with_file(slack, name: str, url: str) -> str:
    slack.event(_file_message(name, url, 100, text="what is this?", channel="D0ALICE", channel_type="im"))
    post = slack.fake.wait_for(lambda: slack.fake.posts("D0ALICE"))[0]
    slack.idle()
    return texts(post["blocks"])


def test_a_file_url_redirecting_to_another_port_never_receives_the_bot_token(slack):
    with _other_server() as (other, seen):
        url = slack.fake.add_redirect("trap.log", f"{other}/steal.log")
        answer = _dm_with_file(slack, "trap.log", url)
    assert "`trap.log`: could not be read (DownloadRefused" in answer
    assert not [h for h in seen if "Authorization" in h], "the token followed the redirect"
    assert seen == []


def test_file_urls_off_the_file_host_or_its_port_are_never_fetched(slack):
    with _other_server() as (other, seen):
        answer = _dm_with_file(slack, "other-port.log", f"{other}/files-pri/T0001-F0001/download/x.log")
    assert "`other-port.log`: could not be read (DownloadRefused: not a Slack file URL" in answer
    assert seen == []


def test_slack_file_host_is_https_only_and_the_api_origin_is_matched_exactly():
    from tracebot.slack.outbox import SlackOutbox

    class Client:
        token = "xoxb-never-sent"

    outbox = SlackOutbox(Client(), api_url="http://127.0.0.1:8001/api/")
    allowed = outbox.file_origins
    assert ("https", "files.slack.com", 443) in allowed and ("http", "127.0.0.1", 8001) in allowed
    from tracebot.service.outbox import DownloadRefused

    for url in (
        "http://files.slack.com/files-pri/x",  # plain http to Slack's host
        "https://files.slack.com:8443/files-pri/x",  # another port
        "https://files.slack.com.evil.example/files-pri/x",
        "http://127.0.0.1:8002/files-pri/x",  # the test allowance is one exact origin
        "https://127.0.0.1:8001/files-pri/x",
    ):
        with pytest.raises(DownloadRefused):
            outbox.download(url, None, 1)  # type: ignore[arg-type]


def test_a_gzip_bomb_is_read_only_up_to_the_inflate_limit_and_the_answer_says_so(slack):
    limits = slack.tracebot.limits
    limits.max_inflated_bytes = limits.max_message_inflated_bytes = 8 << 20
    bomb = gzip.compress(f"{OOM_LINE}\n".encode() + b"\0" * (200 << 20), compresslevel=6)
    assert len(bomb) < 1 << 20  # megabytes of zeros: a few hundred kB
    url = slack.fake.add_file("bomb.log.gz", bomb)
    second = slack.fake.add_file("second.log.gz", gzip.compress(f"{OOM_LINE}\n".encode()))
    files = [payloads.slack_file("bomb.log.gz", url, len(bomb), "application/gzip", "gzip"),
             payloads.slack_file("second.log.gz", second, 100, "application/gzip", "gzip")]
    slack.event(payloads.file_share("", files, channel="D0ALICE", channel_type="im"))
    post = slack.fake.wait_for(lambda: slack.fake.posts("D0ALICE"))[0]
    slack.idle()

    shown = texts(post["blocks"])
    assert "Test: CUDA out of memory" in shown  # what was read still answers
    assert "`bomb.log.gz`: unpacks to more than 8 MB; only the first 8 MB were read" in shown
    assert "`second.log.gz`: skipped, the earlier files used this message's 8 MB budget" in shown
    record = slack.tracebot.store.recent_diagnoses("D0ALICE")[0]
    assert record.matches[0].entry_id == "test-cuda-oom"


def test_a_message_whose_time_budget_is_spent_skips_its_files_and_says_so(slack):
    slack.tracebot.limits.budget_s = 0.0
    bomb = gzip.compress(b"\0" * (64 << 20))
    url = slack.fake.add_file("slow.log.gz", bomb)
    slack.event(_file_message("slow.log.gz", url, len(bomb), text="what is this?", channel="D0ALICE",
                              channel_type="im"))
    post = slack.fake.wait_for(lambda: slack.fake.posts("D0ALICE"))[0]
    assert "`slow.log.gz`: skipped, the earlier files used this message's time budget" in texts(post["blocks"])


def test_every_command_reads_what_was_typed_not_slacks_escaping_of_it(slack, echo):
    # typed "/trace echo R&D <rank 3>": Slack sends "R&amp;D &lt;rank 3&gt;"; the plugin must get it as typed,
    # or the thread shows "R&amp;D" (escaped twice). The same through a mention.
    slack.command(as_slack_sends("echo R&D <rank 3>"))
    slack.event(payloads.mention(as_slack_sends("echo R&D <rank 4>")))
    slack.idle()
    shown = "\n".join(texts(p["blocks"]) for p in slack.fake.posts())
    assert "R&amp;D &lt;rank 3&gt;" in shown and "R&amp;D &lt;rank 4&gt;" in shown  # Slack shows: R&D <rank 3>
    assert "&amp;amp;" not in shown and "&amp;lt;" not in shown


def test_no_secret_of_any_kind_is_kept_in_the_database_by_any_command(slack, echo):
    # trace_runs kept each /trace's dedupe key (a takes_text command's whole paste) and its result's summary
    # as they were, and diagnoses the matched line and the values read off it: a pasted env dump or a plugin's
    # summary quoting a log line left the keys in the SQLite file for good (the audit row beside was scrubbed)
    leaky = "\n".join(LEAKY_LINES)
    slack.event(payloads.message(leaky))
    for words in (f"echo {leaky}", f"diagnose {leaky}", f"kb {leaky}", SECRETS["slack bot token"][0]):
        slack.command(words)
    slack.idle()

    db = slack.tracebot.store.db
    kept = "\n".join(str(value) for table in db.table_names() for row in db[table].rows for value in row.values())
    assert "trace_runs" in db.table_names() and db["trace_runs"].count >= 2
    assert _leaks(kept) == []


def test_the_last_line_of_defence_defuses_every_broadcast_slack_still_honours():
    # <!group> is the legacy form of @channel (private channels); Slack still pings with it
    from tracebot.service.egress import defuse

    for mention in ("<!here>", "<!channel>", "<!everyone>", "<!group>", "<!subteam^S0OPS|@ops>"):
        assert "<!" not in defuse(f"before {mention} after")
