"""The Bolt app, kept thin: a WebClient, the service in the listener context, the listeners.

Run it with Socket Mode (``SLACK_APP_TOKEN``) or over HTTP (``serve``); see ``bot/cli.py``.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from tracebot.config import Config
from tracebot.service.build import build_service
from tracebot.service.ratelimit import RateLimiter
from tracebot.service.service import Service
from tracebot.slack.listeners import register_all
from tracebot.slack.outbox import SERVER_ERRORS, SlackOutbox

log = logging.getLogger(__name__)
API_TIMEOUT_S = 30


class _NotTheTokenWarning(logging.Filter):
    """Bolt's App reads ``$SLACK_BOT_TOKEN`` itself and, given a client too, warned at every start that
    "`token` will be unused": the client :func:`make_client` gives it carries that same token, so an
    operator read a false alarm about their token in the first lines of every log."""

    said = warning_client_prioritized_and_token_skipped()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.said


_NOT_THE_TOKEN_WARNING = _NotTheTokenWarning()


def make_client(config: Config) -> WebClient:
    """The bot's WebClient; ``SLACK_API_URL`` points it elsewhere (a fake Slack in tests)."""
    kwargs: dict[str, Any] = {"token": config.slack_bot_token, "timeout": API_TIMEOUT_S}
    if config.slack_api_url:
        base = config.slack_api_url
        kwargs["base_url"] = base if base.endswith("/") else base + "/"
    client = WebClient(**kwargs)
    # Slack answers 429 with Retry-After; the SDK handler waits that long and tries again.
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    # A 500, 502, 503 or 504 is Slack's own passing trouble (Slack documents 5xx as retryable). Not for
    # chat.postMessage: a post that failed may have landed, and the outbox looks before it posts again.
    client.retry_handlers.append(_ServerErrors(max_retry_count=2))
    return client


class _ServerErrors(ServerErrorRetryHandler):
    """Retries every method but chat.postMessage on Slack's server errors; the SDK's own handler left 502
    and 504 out, and retried a post that may have landed (an answer posted twice)."""

    def _can_retry(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None, error: Exception | None = None
    ) -> bool:
        return (
            response is not None
            and response.status_code in SERVER_ERRORS
            and not request.url.rstrip("/").endswith("/chat.postMessage")
        )


def build_app(
    config: Config,
    *,
    client: WebClient | None = None,
    listener_executor: Executor | None = None,
    **services: Any,
) -> tuple[App, Service]:
    """The Bolt app and its service. ``services`` override parts of the service (store, host, jobs...)."""
    client = client or make_client(config)
    logging.getLogger("slack_bolt.App").addFilter(_NOT_THE_TOKEN_WARNING)  # once: addFilter skips a repeat
    app = App(
        client=client,
        listener_executor=listener_executor,
        signing_secret=config.slack_signing_secret or "",
        # Checked by the Socket Mode / HTTP entry point; without it Bolt would refuse to start in
        # Socket Mode deployments that have no signing secret.
        request_verification_enabled=bool(config.slack_signing_secret),
    )
    bot_user_id = client.auth_test()["user_id"]
    limiter = RateLimiter(rate=config.channel_rate, burst=config.channel_burst)
    outbox = SlackOutbox(client, limiter, api_url=config.slack_api_url)
    service = build_service(config, outbox, bot_user_id=bot_user_id, limiter=limiter, **services)

    @app.middleware
    def provide_tracebot(context: BoltContext, next: Any) -> Any:  # noqa: A002 (Bolt's argument name)
        context["service"] = service
        return next()

    @app.error
    def report(error: Exception, body: dict[str, Any]) -> None:
        kind = body.get("type") or body.get("command") or "request"
        log.error("handling a Slack %s failed: %s", kind, type(error).__name__, exc_info=error)

    register_all(app)
    return app, service
