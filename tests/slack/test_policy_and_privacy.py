"""Where tracebot may act (the admins' channel policy) and what only the caller sees (refusals and usage
errors of ``@tracebot <command>`` and ``/trace``), against the fake Slack."""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import make_config, running_app
from tests.slack.tiny_kb import OOM_LINE
from tracebot.config import ChannelPolicy


def _ephemerals(slack, user: str) -> list[dict]:
    return [c.params for c in slack.fake.calls_to("chat.postEphemeral") if c.params["user"] == user]


def test_trace_and_auto_replies_happen_only_in_the_channels_the_admins_chose(tmp_path, fake_slack, kb_dir, plugin_host):
    host, slow = plugin_host
    policy = ChannelPolicy(trace=frozenset({"C0OPS"}), auto_reply=frozenset({"C0OPS"}))
    with running_app(make_config(tmp_path, fake_slack, kb_dir, channels=policy), fake_slack, host=host, slow=slow) as slack:
        refused = slack.command("slow 5", channel="C0TRAIN").json()
        assert refused["response_type"] == "ephemeral"
        assert "`/trace slow` is not enabled in this channel" in texts(refused["blocks"])
        assert "help" in texts(slack.command("help", channel="C0TRAIN").json()["blocks"]), "help answers anywhere"
        slack.event(payloads.message(OOM_LINE, channel="C0TRAIN"))  # nobody asked: not in this channel
        slack.event(payloads.message(OOM_LINE, channel="C0OPS"))
        assert slack.command("slow 6", channel="C0OPS").body == ""
        assert slack.command("slow 8", channel="D0ALICE").body == "", "a DM with tracebot is always allowed"
        slack.event(payloads.mention(OOM_LINE, channel="C0TRAIN"))  # someone asked: answered
        slack.event(payloads.mention("slow 7", channel="C0TRAIN"))
        slack.idle()
        assert slow.runs and sorted(slow.runs) == [6, 8]
        train = slack.fake.posts("C0TRAIN")
        assert len(train) == 1 and "Test: CUDA out of memory" in texts(train[0]["blocks"])
        assert any("/trace slow 6" in p["text"] for p in slack.fake.posts("C0OPS"))
        assert any("Test: CUDA out of memory" in texts(p["blocks"]) for p in slack.fake.posts("C0OPS"))
        (told,) = _ephemerals(slack, "U0ALICE")
        assert told["channel"] == "C0TRAIN" and "not enabled in this channel" in texts(told["blocks"])
        shown = slack.command("config", channel="C0TRAIN", user="U0ADMIN").json()
        assert "not one of TRACEBOT_CONFIG's channels.auto_reply" in texts(shown["blocks"])


def test_a_usage_error_of_a_command_in_a_thread_is_shown_only_to_the_caller(slack):
    root = payloads.new_ts()
    slack.event(payloads.mention("slow twelve", thread_ts=root))
    told = slack.fake.wait_for(lambda: _ephemerals(slack, "U0ALICE"))[0]
    slack.idle()
    assert "give one job number" in texts(told["blocks"]) and told["thread_ts"] == root
    assert slack.fake.posts() == []


def test_an_admins_only_command_refused_in_a_thread_is_shown_only_to_the_caller(slack):
    root = payloads.new_ts()
    slack.event(payloads.mention("config threshold 10", thread_ts=root, user="U0BOB"))
    told = slack.fake.wait_for(lambda: _ephemerals(slack, "U0BOB"))[0]
    slack.idle()
    assert "Only tracebot admins" in texts(told["blocks"])
    assert slack.fake.posts() == []


def test_a_refusal_met_while_running_is_shown_only_to_the_caller(slack):
    # U0BOB has no cluster user: the plugin refuses once it runs, in a thread and from /trace.
    root = payloads.new_ts()
    slack.event(payloads.mention("guarded 41", thread_ts=root, user="U0BOB"))
    slack.command("guarded 42", user="U0BOB")
    slack.idle()
    told = slack.fake.wait_for(lambda: len(_ephemerals(slack, "U0BOB")) == 2 and _ephemerals(slack, "U0BOB"))
    assert all("not mapped to a cluster user" in texts(t["blocks"]) for t in told)
    public = slack.fake.posts() + [c.params for c in slack.fake.calls_to("chat.update")]
    assert public and all("not mapped" not in (p["text"] + texts(p.get("blocks") or [])) for p in public)
    slack.command("guarded 43", user="U0ALICE")  # a mapped user gets the result in the channel
    slack.idle()
    assert any("job 43 belongs to alice" in texts(p["blocks"]) for p in slack.fake.posts())


def test_the_channel_policy_is_read_from_tracebot_config_and_a_mistake_is_named(tmp_path):
    import pytest

    from tracebot.config import Config

    path = tmp_path / "tracebot.yaml"
    path.write_text("channels:\n  trace: [C0OPS, C0TRAIN]\n  auto_reply: '*'\n")
    policy = Config.from_env({"TRACEBOT_CONFIG": str(path)}).channels
    assert policy.may_trace("C0OPS") and not policy.may_trace("C0RANDOM") and policy.may_trace("D0ALICE")
    assert policy.may_auto_reply("C0RANDOM")
    path.write_text("channels:\n  trace: C0OPS\n")
    with pytest.raises(ValueError, match="channels.trace must be a list of channel ids"):
        Config.from_env({"TRACEBOT_CONFIG": str(path)})
    path.write_text("channels:\n  tarce: [C0OPS]\n")
    with pytest.raises(ValueError, match="channels: must be a mapping with trace and/or auto_reply"):
        Config.from_env({"TRACEBOT_CONFIG": str(path)})
