"""Running the real Bolt app over real HTTP on 127.0.0.1 against the fake Slack Web API, and sending it
signed requests as Slack does. Used by the Slack tests (``conftest.py``) and ``bench/bench_slack_load.py``."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.fake_slack import FakeSlack
from tests.slack import payloads
from tests.slack.plugins_for_tests import SlowPlugin
from tracebot.config import Config
from tracebot.service.jobs import JobPool
from tracebot.service.service import Service
from tracebot.slack.app import build_app
from tracebot.slack.http import make_http_server

SIGNING_SECRET = "fake-signing-secret-0123456789abcdef"


@dataclass
class Response:
    status: int
    body: str

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def send_signed(
    url: str,
    body: str,
    content_type: str,
    headers: dict[str, str] | None = None,
    timestamp: int | None = None,
) -> Response:
    """POST ``body`` as Slack does: v0-signed with the signing secret at ``timestamp`` (default now)."""
    signed = payloads.sign(SIGNING_SECRET, body, timestamp)
    req = urllib.request.Request(
        url,
        data=body.encode(),
        method="POST",
        headers={"Content-Type": content_type, **signed, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return Response(resp.status, resp.read().decode())
    except urllib.error.HTTPError as err:
        return Response(err.code, err.read().decode())


@dataclass
class Slack:
    fake: FakeSlack
    tracebot: Service
    url: str
    config: Config
    listeners: CountingExecutor
    slow: SlowPlugin | None = None

    def send(
        self,
        body: str,
        content_type: str,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
    ) -> Response:
        return send_signed(self.url, body, content_type, headers, timestamp)

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
            assert self.tracebot.wait_idle(timeout), "tracebot's jobs did not finish"


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


SERVER_LIMITS = {"threads", "connection_limit", "idle_timeout_s", "request_timeout_s", "max_body_bytes"}


@contextmanager
def running_app(
    config: Config,
    fake: FakeSlack,
    *,
    host: Any,
    slow: SlowPlugin | None = None,
    workers: int = 4,
    **options: Any,
) -> Iterator[Slack]:
    """The Bolt app (Bolt's default 5 listener threads) serving on an ephemeral loopback port. ``options``
    named after a server limit (``threads``, ``idle_timeout_s``, ``request_timeout_s``, ``max_body_bytes``,
    ``connection_limit``) go to :func:`make_http_server`; the others override parts of the service
    (``store``, ``jobs``...)."""
    limits = {k: options.pop(k) for k in list(options) if k in SERVER_LIMITS}
    listeners = CountingExecutor()
    options.setdefault("jobs", JobPool(workers=workers))
    app, tracebot = build_app(config, host=host, listener_executor=listeners, **options)
    server = make_http_server(app, SIGNING_SECRET, "127.0.0.1", 0, **limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/slack/events"
    try:
        yield Slack(fake, tracebot, url, config, listeners, slow)
    finally:
        server.shutdown()
        listeners.shutdown(wait=True)
        tracebot.shutdown(wait=True)
        tracebot.store.close()
