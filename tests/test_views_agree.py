"""One answer, three views: for every labelled corpus case, Slack's answer, the console's and
``tracebot diagnose --json`` name the same first entry with the same confidence."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tests.slack.blocks import texts
from tracebot.cli import main as cli_main
from tracebot.config import Config
from tracebot.console import ConsoleOutbox
from tracebot.render.blocks_text import blocks_to_text
from tracebot.render.messages import LANGS, msg
from tracebot.service.build import build_service
from tracebot.service.inbound import Inbound
from tracebot.service.plugin_host import PluginHost
from tracebot.store import Store

ROOT = Path(__file__).resolve().parents[1]
CASES = [c for c in map(json.loads, (ROOT / "tests/corpus/cases.jsonl").read_text().splitlines()) if "text" in c]
# "Nothing matched with confidence" in each language tracebot answers in
NOTHING_CONFIDENT = tuple(msg(lang, "not_confident").partition(" (")[0] for lang in LANGS)
FIRST_ID = re.compile(r"`([a-z0-9-]+)` · score")
SCORED = re.compile(r"`([a-z0-9-]+)` · score (\d+)")


@pytest.fixture(scope="module")
def views(tmp_path_factory) -> dict[str, dict]:
    """``{view: {case id: (first entry id or None, confident)}}`` for the three views; ``scored`` holds what
    each view prints as "`entry` · score N", in its order (the CLI's from ``score_shown``)."""
    tmp = tmp_path_factory.mktemp("views")
    cases_file = tmp / "cases.jsonl"
    cases_file.write_text("".join(json.dumps({"id": c["id"], "text": c["text"]}) + "\n" for c in CASES))
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(["diagnose", "--batch", str(cases_file), "--json"]) == 0
    cli, scored = {}, {}
    for line in out.getvalue().splitlines():
        row = json.loads(line)
        scored[("cli", row["id"])] = [(m["id"], f"{m['score_shown']:.0f}") for m in row["matches"]]
        # a chat line's closest entries are listed but not shown to a reader ("thanks!" is asked for the error)
        first = row["matches"][0] if row["matches"] and row["guesses_shown"] else None
        cli[row["id"]] = (first["id"] if first else None, bool(first and first["confident"]))

    config = Config(db_path=tmp / "views.sqlite3")
    outbox = ConsoleOutbox(io.StringIO())
    service = build_service(config, outbox, store=Store(config.db_path), host=PluginHost(builtins=(), entry_points=False))
    slack, console = {}, {}
    try:
        for n, case in enumerate(CASES):
            before = len(outbox.posted)
            msg = Inbound(channel="C0VIEWS", user="U0VIEWS", ts=f"1700000000.{n:06d}", text=case["text"])
            service.on_direct(msg, "mention")
            assert service.wait_idle(60)
            posted = outbox.posted[before:]
            assert len(posted) == 1, case["id"]
            blocks = posted[0].blocks
            # The answer names its entry and score in its footer (a context block) since the compact
            # answer: read every text a Slack reader sees, sections and context alike.
            slack_text = texts(blocks)
            console_text = blocks_to_text(blocks, posted[0].text)
            for view, text in (("slack", slack_text), ("console", console_text)):
                scored[(view, case["id"])] = SCORED.findall(text)
                found = FIRST_ID.search(text)
                first = found.group(1) if found else None
                confident = first is not None and not any(n in text for n in NOTHING_CONFIDENT)
                (slack if view == "slack" else console)[case["id"]] = (first, confident)
    finally:
        service.shutdown(wait=False)
    return {"cli": cli, "slack": slack, "console": console, "scored": scored}


def test_the_corpus_has_cases_for_every_view():
    assert len(CASES) > 200


def test_slack_console_and_diagnose_json_agree_on_every_corpus_case(views):
    shown = ("cli", "slack", "console")
    disagree = {
        case["id"]: {view: views[view].get(case["id"]) for view in shown}
        for case in CASES
        if len({views[view].get(case["id"]) for view in shown}) != 1
    }
    assert disagree == {}


def test_every_view_prints_the_same_score_for_an_entry_and_never_a_higher_one_below_a_lower(views):
    # guesses were listed in the ranking's order with their own scores: "2, 3, 2", the second looking surer
    wrong = {}
    for case in CASES:
        json_scores = dict(views["scored"][("cli", case["id"])])
        for view in ("cli", "slack", "console"):
            listed = views["scored"][(view, case["id"])]
            numbers = [int(n) for _, n in listed]
            if numbers != sorted(numbers, reverse=True) or any(json_scores.get(e, n) != n for e, n in listed):
                wrong[(view, case["id"])] = listed
    assert wrong == {}


def test_the_views_name_an_entry_for_most_cases(views):
    # The agreement above must not be three views agreeing on "nothing".
    named = [cid for cid, (first, _) in views["slack"].items() if first]
    assert len(named) > 0.7 * len(CASES)


CHAT = ["thanks!", "ok it works now", "how did you fix it?"]
# a problem described in a person's words, nothing confident: its closest guesses are worth showing
UNSURE_ERROR = "the job hangs after a few hours on 2 nodes, any idea?"


@pytest.fixture(scope="module")
def mentioned(tmp_path_factory) -> dict[str, str]:
    """What a mention of tracebot gets back in the console (Slack's blocks as text), per text sent."""
    tmp = tmp_path_factory.mktemp("chat")
    config = Config(db_path=tmp / "chat.sqlite3")
    outbox = ConsoleOutbox(io.StringIO())
    service = build_service(config, outbox, store=Store(config.db_path), host=PluginHost(builtins=(), entry_points=False))
    replies = {}
    try:
        for n, text in enumerate([*CHAT, UNSURE_ERROR]):
            before = len(outbox.posted)
            service.on_direct(Inbound(channel="C0CHAT", user="U0CHAT", ts=f"1700000001.{n:06d}", text=text), "mention")
            assert service.wait_idle(60)
            posted = outbox.posted[before:]
            assert len(posted) == 1, text  # a mention always ends in a reply
            replies[text] = blocks_to_text(posted[0].blocks, posted[0].text)
    finally:
        service.shutdown(wait=False)
    return replies


@pytest.mark.parametrize("text", CHAT)
def test_a_mention_that_is_only_chat_is_asked_for_the_error_not_given_guesses(mentioned, text, capsys):
    # "thanks!" answered with "Closest guesses … score 1" and an NCCL fix step: a bot that answers a
    # thank-you with a tip gets muted. The reply asks for the error; the terminal says the same.
    reply = mentioned[text]
    assert "Nothing here looks like an error I know" in reply and "Paste the error message or the log" in reply
    assert "Closest guesses" not in reply and FIRST_ID.search(reply) is None and "If it is" not in reply
    out = io.StringIO()
    with redirect_stdout(out), pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
        assert cli_main(["diagnose", "-"]) == 0
    assert "Nothing here looks like an error I know" in out.getvalue() and "score" not in out.getvalue()


def test_a_mention_with_an_error_that_is_not_confident_still_lists_its_closest_guesses(mentioned):
    reply = mentioned[UNSURE_ERROR]
    assert "Nothing here looks like" not in reply
    assert any(n in reply for n in NOTHING_CONFIDENT) and FIRST_ID.search(reply) is not None
