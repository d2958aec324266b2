"""A fake Socket Mode endpoint (Slack's ``wss://wss-primary.slack.com/link``) on loopback.

It speaks the documented protocol: on connect it sends ``hello``; it sends envelopes
(``{"envelope_id", "type": "events_api" | "slash_commands" | "interactive", "payload",
"accepts_response_payload", "retry_attempt", "retry_reason"}``) and records the acks the app sends back
(``{"envelope_id"[, "payload"]}``). Several clients may connect, as with several app processes.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from websockets.sync.server import ServerConnection, serve


class FakeSocketMode:
    def __init__(self, app_id: str = "A0001") -> None:
        self.app_id = app_id
        self.connections: list[ServerConnection] = []
        self.acks: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._server = serve(self._handle, "127.0.0.1", 0)
        self.port = self._server.socket.getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}/link/?ticket=fake-ticket&app_id={app_id}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> FakeSocketMode:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()

    def _handle(self, ws: ServerConnection) -> None:
        with self._lock:
            self.connections.append(ws)
            n = len(self.connections)
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": n,
                    "debug_info": {
                        "host": "applink-fake",
                        "build_number": 1,
                        "approximate_connection_time": 18060,
                    },
                    "connection_info": {"app_id": self.app_id},
                }
            )
        )
        try:
            for raw in ws:
                data = json.loads(raw)
                if "envelope_id" in data:
                    with self._lock:
                        self.acks[data["envelope_id"]] = data
        except Exception:  # a client closing mid-read is normal at test teardown
            pass
        finally:
            with self._lock:
                if ws in self.connections:
                    self.connections.remove(ws)

    def wait_connected(self, n: int = 1, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.connections) >= n:
                return
            time.sleep(0.02)
        raise AssertionError(f"{len(self.connections)} Socket Mode connections, wanted {n}")

    def send(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        connection: int = 0,
        envelope_id: str | None = None,
        retry_attempt: int = 0,
    ) -> str:
        envelope_id = envelope_id or str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": kind,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        with self._lock:
            ws = self.connections[connection]
        ws.send(json.dumps(envelope))
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if envelope_id in self.acks:
                    return self.acks[envelope_id]
            time.sleep(0.01)
        raise AssertionError(f"no ack for envelope {envelope_id}")
