"""``/trace``: acked at once (with the answer itself when it is quick); slow work goes to the job pool.

Slack takes an acknowledgement for three seconds; Bolt answers a later one as an unhandled request (404)
and the user reads "dispatch_failed" while the reply is lost. Planning a command writes the audit log
and the run's inbox row, and a database another process holds locked keeps those waiting for the
store's busy timeout (seconds). So the ack never waits past :data:`ACK_BUDGET_S`: then it goes out empty,
and the reply follows through the command's ``response_url`` when it is ready. A command whose planning
fails is answered the same way, with an apology.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltContext

from tracebot.render.slack import section
from tracebot.service.inbound import SlashCommand

log = logging.getLogger(__name__)
COMMAND = "/trace"
ACK_BUDGET_S = 2.0  # of Slack's 3 seconds; the rest is Bolt's and the network's


class _AckOnce:
    """The command's one acknowledgement: the reply when it is ready in time, else an empty one."""

    def __init__(self, ack: Callable[..., Any]) -> None:
        self._ack = ack
        self._lock = threading.Lock()
        self._sent = False

    def send(self, **reply: Any) -> bool:
        """Ack with ``reply``; False when the ack already went out (without it)."""
        with self._lock:
            if self._sent:
                return False
            self._sent = True
        self._ack(**reply)
        return True


def on_trace(ack: Ack, command: dict[str, Any], context: BoltContext) -> None:
    service = context["service"]
    once = _AckOnce(ack)
    deadline = threading.Timer(ACK_BUDGET_S, once.send)
    deadline.daemon = True
    deadline.start()
    try:
        reply = service.on_command(
            SlashCommand(channel=command["channel_id"], user=command["user_id"], text=command.get("text") or "")
        )
    except Exception as exc:
        # Said to the caller: Slack's own "dispatch_failed", or nothing after an empty ack, said nothing of
        # what happened. Logged here, not raised to the app's error handler: Bolt answers a listener that
        # raises with a 500 and drops the ack it had made, apology and all.
        log.error("handling a Slack /trace failed: %s", type(exc).__name__, exc_info=exc)
        text = f":x: Sorry, `/trace` failed ({type(exc).__name__}); the error is in my log."
        _answer(service, once, command, (text, [section(text)]))
        return
    finally:
        deadline.cancel()
    if reply is None:
        once.send()  # queued: the run's parent message in the channel is the answer
        return
    _answer(service, once, command, reply)


def _answer(service: Any, once: _AckOnce, command: dict[str, Any], reply: tuple[str, list[Any]]) -> None:
    """``reply`` in the ack when it is still to be sent, else through the command's response_url."""
    text, blocks = reply
    if not once.send(text=text, blocks=blocks, response_type="ephemeral") and command.get("response_url"):
        service.outbox.respond(command["response_url"], text, blocks)


def register(app: App) -> None:
    app.command(COMMAND)(on_trace)
