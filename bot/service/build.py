"""Build a :class:`Tracebot` from the configuration: store, knowledge holder, plugin host, job pool.

Shared by the Slack app and the console, so both run the same handlers over the same services.
Tunables not in :class:`tracebot.config.Config` are read from the environment here (README "Configuration").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tracebot.service.jobs import JobPool
from tracebot.service.knowledge import KnowledgeHolder
from tracebot.service.outbox import Outbox
from tracebot.service.router import TraceRouter
from tracebot.service.service import Tracebot, Tunables
from tracebot.store import Store


def _num(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


def tunables_from_env(env: Mapping[str, str] | None = None) -> Tunables:
    env = os.environ if env is None else env
    return Tunables(
        repeat_window_s=_num(env, "TRACEBOT_REPEAT_WINDOW_S", 600.0),
        max_file_bytes=int(_num(env, "TRACEBOT_MAX_FILE_MB", 50.0) * 1024 * 1024),
    )


def channel_rate_from_env(env: Mapping[str, str] | None = None) -> tuple[float, int]:
    """Messages per second per channel and the burst (Slack: about one a second)."""
    env = os.environ if env is None else env
    return _num(env, "TRACEBOT_CHANNEL_RATE", 1.0), int(_num(env, "TRACEBOT_CHANNEL_BURST", 3))


def build_tracebot(
    config: Any,
    outbox: Outbox,
    *,
    store: Store | None = None,
    knowledge: KnowledgeHolder | None = None,
    host: Any = None,
    jobs: JobPool | None = None,
    tunables: Tunables | None = None,
    bot_user_id: str | None = None,
) -> Tracebot:
    if host is None:
        from tracebot.service.plugin_host import default_host

        host = default_host()
    store = store or Store(config.db_path)
    knowledge = knowledge or KnowledgeHolder(config.knowledge_dir, config.confidence_threshold)
    max_pending = int(_num(os.environ, "TRACEBOT_MAX_PENDING", 500))
    jobs = jobs or JobPool(workers=int(_num(os.environ, "TRACEBOT_JOB_WORKERS", 4)), max_pending=max_pending)
    trace_workers = int(_num(os.environ, "TRACEBOT_TRACE_WORKERS", 4))
    trace_jobs = JobPool(workers=trace_workers, max_pending=max_pending, name="tracebot-trace")
    return Tracebot(
        config=config,
        store=store,
        knowledge=knowledge,
        outbox=outbox,
        jobs=jobs,
        trace_jobs=trace_jobs,
        router=TraceRouter(host, store, knowledge, config),
        bot_user_id=bot_user_id,
        tunables=tunables or tunables_from_env(),
    )
