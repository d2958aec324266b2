"""Fixtures for the Slack end-to-end tests: the real Bolt app over real HTTP on 127.0.0.1, signed
requests, and its WebClient pointed at the fake Slack Web API (``tests/fakes/fake_slack.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_slack import FakeSlack
from tests.slack.harness import Slack, make_config, running_app
from tests.slack.plugins_for_tests import BigPlugin, GuardedPlugin, SlowPlugin
from tests.slack.tiny_kb import write_tiny_kb
from tracebot.service.plugin_host import PluginHost


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    return write_tiny_kb(tmp_path / "knowledge")


@pytest.fixture
def plugin_host() -> Iterator[tuple[PluginHost, SlowPlugin]]:
    host = PluginHost(builtins=(), entry_points=False)
    slow = SlowPlugin(seconds=0.2)
    big, guarded = BigPlugin(), GuardedPlugin()
    host.register(slow, name="test-slow")
    host.register(big, name="test-big")
    host.register(guarded, name="test-guarded")
    yield host, slow
    host.unregister(slow)
    host.unregister(big)
    host.unregister(guarded)


@pytest.fixture
def slack(tmp_path: Path, fake_slack: FakeSlack, kb_dir: Path, plugin_host, monkeypatch) -> Iterator[Slack]:
    # Generous per-channel rate in most tests; the rate-limit test sets its own.
    monkeypatch.setenv("TRACEBOT_CHANNEL_RATE", "200")
    monkeypatch.setenv("TRACEBOT_CHANNEL_BURST", "50")
    host, slow = plugin_host
    with running_app(make_config(tmp_path, fake_slack, kb_dir), fake_slack, host=host, slow=slow) as app:
        yield app


@pytest.fixture
def start_app(tmp_path: Path, fake_slack: FakeSlack, kb_dir: Path, plugin_host, monkeypatch) -> Iterator[Callable[..., Slack]]:
    """``start_app(jobs=...)`` starts tracebot on the test's database, with parts of the service given;
    called again, a second process on the same database (a restart)."""
    monkeypatch.setenv("TRACEBOT_CHANNEL_RATE", "200")
    monkeypatch.setenv("TRACEBOT_CHANNEL_BURST", "50")
    host, slow = plugin_host
    stack: list[Any] = []

    def start(**services: Any) -> Slack:
        cm = running_app(make_config(tmp_path, fake_slack, kb_dir), fake_slack, host=host, slow=slow, **services)
        stack.append(cm)
        return cm.__enter__()

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)
