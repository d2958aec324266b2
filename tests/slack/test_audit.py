"""Who ran which command, where and when: recorded for every request (refusals too), shown to admins in
the App Home and by ``tracebot audit``; secrets scrubbed, user text escaped."""

from __future__ import annotations

import json

from tests.slack import payloads
from tests.slack.blocks import over_slack_limits, texts
from tracebot.cli import main
from tracebot.markup import as_slack_sends


def test_every_command_request_is_audited_and_admins_see_it_in_app_home_and_tracebot_audit(slack, capsys):
    token = slack.fake.bot_token
    slack.command("slow 12", user="U0ALICE", channel="C0TRAIN")
    slack.command(as_slack_sends(f"kb <!here> *bold* {token}"), user="U0BOB", channel="C0OPS")  # typed as text
    slack.command("config threshold 5", user="U0BOB", channel="C0OPS")  # refused: admins only
    slack.event(payloads.mention("slow twelve", user="U0CAROL", channel="C0TRAIN"))  # a usage error
    slack.idle()
    slack.command("guarded 9", user="U0BOB", channel="C0OPS")  # refused while it runs: Bob has no cluster user
    slack.idle()

    slack.event(payloads.home_opened("U0ADMIN"))
    admin_view = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[0].params["view"]
    shown = texts(admin_view["blocks"])
    assert "Who ran what" in shown
    assert "<@U0ALICE> · `/trace slow 12` in <#C0TRAIN> · started" in shown
    assert "<@U0BOB> · `/trace config threshold 5` in <#C0OPS> · not_allowed" in shown
    assert "<@U0CAROL> · `/trace slow twelve` in <#C0TRAIN> · usage" in shown
    assert "<@U0BOB> · `/trace guarded 9` in <#C0OPS> · not_allowed" in shown
    assert "&lt;!here&gt; *bold*" in shown and "<!here>" not in shown and token not in shown

    slack.event(payloads.home_opened("U0ALICE"))
    slack.fake.wait_for(lambda: len(slack.fake.calls_to("views.publish")) == 2)
    assert "Who ran what" not in texts(slack.fake.calls_to("views.publish")[1].params["view"]["blocks"])

    capsys.readouterr()
    assert main(["audit", "--db", str(slack.config.db_path), "--user", "U0BOB", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["audit"]
    assert [(r["command"], r["outcome"], r["via"]) for r in rows] == [
        ("guarded", "not_allowed", "run"), ("guarded", "started", "slash"),
        ("config", "not_allowed", "slash"), ("kb", "answered", "slash"),
    ]
    assert token not in rows[3]["args"] and "<!here>" in rows[3]["args"]
    assert main(["audit", "--db", str(slack.config.db_path)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 7 and table[-1].split()[2:7] == ["U0ALICE", "C0TRAIN", "slash", "started", "/trace"]


def test_tracebot_audit_prints_stored_control_characters_harmlessly(tmp_path, capsys):
    from tracebot.store import Store

    db = tmp_path / "audit.sqlite3"
    Store(db).record_audit(user="U1", channel="C1", via="slash", command="kb", args="\x1b[2J\x1b]0;pwned\x07x\ny",
                           outcome="answered")
    assert main(["audit", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "?[2J?]0;pwned?x?y" in out


def test_an_admin_whose_team_pasted_tracebacks_into_fifteen_commands_still_gets_an_app_home(slack):
    # Slack refuses a whole view (invalid_blocks) when one section passes 3,000 characters: the admin's
    # App Home would not open at all. Fifteen `/trace kb <a traceback's line>` requests (as Slack sends
    # them: < and > escaped), from a channel with a real-length id, are enough.
    line = ('File "/home/alice/llm/train.py", line 212, in &lt;module&gt; main(cfg) -&gt; '
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices")
    for i in range(15):
        slack.command(f"kb step {i}: {line}", user="U0ADMIN", channel="C05F3KJ8RHP")
    slack.event(payloads.home_opened("U0ADMIN"))
    view = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[0].params["view"]
    assert over_slack_limits(view["blocks"], max_blocks=100) == []
    shown = texts(view["blocks"])
    assert "step 14" in shown, "the newest command comes first"
    assert "`tracebot audit` lists them all" in shown
