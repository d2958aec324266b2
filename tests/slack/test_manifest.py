"""The app manifest declares exactly what the code listens for, and /trace help lists every command."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.slack.blocks import texts
from tracebot.slack.listeners import register_all
from tracebot.slack.listeners.commands import COMMAND

MANIFEST = yaml.safe_load((Path(__file__).resolve().parents[2] / "slack-app-manifest.yaml").read_text())
# Events API "message" events arrive per conversation type; the manifest subscribes to each.
MESSAGE_EVENTS = {"message.channels", "message.groups", "message.im", "message.mpim"}


class Recorder:
    """Stands in for the Bolt App while ``register_all`` runs, to list what the code registers."""

    def __init__(self) -> None:
        self.registered: dict[str, list[object]] = {"event": [], "command": [], "shortcut": [], "action": [], "view": []}

    def __getattr__(self, kind: str):  # app.event("message")(callback), app.command("/trace")(...)
        def register(key: object):
            self.registered[kind].append(key)
            return lambda callback: callback

        return register


def _registered() -> dict[str, list[object]]:
    recorder = Recorder()
    register_all(recorder)  # type: ignore[arg-type]
    return recorder.registered


def test_the_manifest_declares_the_slash_command_and_shortcut_the_code_handles():
    registered = _registered()
    features = MANIFEST["features"]
    assert [c["command"] for c in features["slash_commands"]] == registered["command"] == [COMMAND]
    assert [s["callback_id"] for s in features["shortcuts"] if s["type"] == "message"] == registered[
        "shortcut"
    ]
    assert registered["action"], "the answer's buttons need interactivity"
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] is True


def test_the_manifest_subscribes_to_exactly_the_events_the_code_listens_for():
    code_events = set()
    for event in _registered()["event"]:
        code_events |= MESSAGE_EVENTS if event == "message" else {event}
    assert set(MANIFEST["settings"]["event_subscriptions"]["bot_events"]) == code_events


def test_the_manifest_asks_for_the_scopes_those_events_and_calls_need_and_no_more():
    needed = {"app_mentions:read", "chat:write", "commands", "files:read", "files:write"}
    needed |= {"channels:read", "groups:read"}  # conversations.members, for the App Home's privacy
    needed |= {"im:write"}  # conversations.open, for answers in a DM
    needed |= {e.split(".")[1] + ":history" for e in MESSAGE_EVENTS}
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == needed


def test_trace_help_lists_every_builtin_and_plugin_command(slack):
    shown = texts(slack.command("help").json()["blocks"])
    names = slack.tracebot.router.command_names()
    assert {"help", "diagnose", "kb", "config"} <= set(names)
    for name in names:
        assert f"/trace {name}" in shown
