"""The Slack end-to-end harness: the real Bolt app over real HTTP on 127.0.0.1, signed requests, and
its WebClient pointed at the fake Slack Web API (``tests/fakes/fake_slack.py``)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.jobs import JobPool
from bot.plugin_host import PluginHost
from bot.slack.app import build_app
from bot.slack.handlers import Tracebot
from bot.slack.http import make_http_server
from tests.fakes.fake_slack import FakeSlack
from tests.slack import payloads
from tests.slack.plugins_for_tests import BigPlugin, SlowPlugin
from tests.slack.tiny_kb import write_tiny_kb

SIGNING_SECRET = "fake-signing-secret-0123456789abcdef"


@dataclass
class Response:
    status: int
    body: str

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Slack:
    fake: FakeSlack
    tracebot: Tracebot
    url: str
    slow: SlowPlugin
    config: Config
    listeners: CountingExecutor

    def send(
        self,
        body: str,
        content_type: str,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
    ) -> Response:
        signed = payloads.sign(SIGNING_SECRET, body, timestamp)
        req = urllib.request.Request(
            self.url,
            data=body.encode(),
            method="POST",
            headers={"Content-Type": content_type, **signed, **(headers or {})},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return Response(resp.status, resp.read().decode())
        except urllib.error.HTTPError as err:
            return Response(err.code, err.read().decode())

    def event(self, event: dict[str, Any], event_id: str | None = None, **kw: Any) -> Response:
        return self.send(json.dumps(payloads.event_callback(event, event_id)), "application/json", **kw)

    def command(self, text: str, **kw: Any) -> Response:
        return self.send(payloads.slash(text, **kw), "application/x-www-form-urlencoded")

    def interaction(self, form: str) -> Response:
        return self.send(form, "application/x-www-form-urlencoded")

    def idle(self, timeout: float = 20.0) -> None:
        """Wait until Bolt's listeners and tracebot's jobs are all done (so "nothing was posted" means it)."""
        for _ in range(2):  # a listener queues a job; a job never queues a listener
            assert self.listeners.wait_idle(timeout), "Bolt listeners did not finish"
            assert self.tracebot.jobs.wait_idle(timeout), "tracebot's jobs did not finish"


class CountingExecutor(ThreadPoolExecutor):
    """Bolt's listener pool (5 threads, as Bolt's default), counting work not yet finished."""

    def __init__(self) -> None:
        super().__init__(max_workers=5, thread_name_prefix="bolt-listener")
        self._unfinished = 0
        self._count_lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self._count_lock:
            self._unfinished += 1
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._done)
        return future

    def _done(self, _future: Any) -> None:
        with self._count_lock:
            self._unfinished -= 1

    def wait_idle(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._count_lock:
                if self._unfinished == 0:
                    return True
            time.sleep(0.01)
        return False


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    return write_tiny_kb(tmp_path / "knowledge")


def make_config(tmp_path: Path, fake: FakeSlack, kb_dir: Path, **overrides: Any) -> Config:
    return Config(
        knowledge_dir=kb_dir,
        db_path=tmp_path / "tracebot.sqlite3",
        slack_bot_token=fake.bot_token,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=fake.api_url,
        admins={"U0ADMIN"},
        user_map={"U0ALICE": "alice"},
        **overrides,
    )


@pytest.fixture
def plugin_host() -> Iterator[tuple[PluginHost, SlowPlugin]]:
    host = PluginHost(builtins=(), entry_points=False)
    slow = SlowPlugin(seconds=0.2)
    big = BigPlugin()
    host.register(slow, name="test-slow")
    host.register(big, name="test-big")
    yield host, slow
    host.unregister(slow)
    host.unregister(big)


@pytest.fixture
def slack(tmp_path: Path, fake_slack: FakeSlack, kb_dir: Path, plugin_host, monkeypatch) -> Iterator[Slack]:
    # Generous per-channel rate in most tests; the rate-limit test sets its own.
    monkeypatch.setenv("TRACEBOT_CHANNEL_RATE", "200")
    monkeypatch.setenv("TRACEBOT_CHANNEL_BURST", "50")
    host, slow = plugin_host
    config = make_config(tmp_path, fake_slack, kb_dir)
    listeners = CountingExecutor()
    app, tracebot = build_app(config, host=host, jobs=JobPool(workers=4), listener_executor=listeners)
    server = make_http_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/slack/events"
    yield Slack(fake_slack, tracebot, url, slow, config, listeners)
    server.shutdown()
    server.server_close()
    listeners.shutdown(wait=True)
    tracebot.jobs.shutdown(wait=True)
    tracebot.store.close()
