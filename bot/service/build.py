"""Build a :class:`~tracebot.service.service.Service` from the configuration: store, knowledge holder,
plugin host, router, job pools. Shared by the Slack app and the console, so both run the same service."""

from __future__ import annotations

from tracebot.config import Config
from tracebot.service.jobs import JobPool
from tracebot.service.knowledge import KnowledgeHolder
from tracebot.service.outbox import Outbox
from tracebot.service.plugin_host import PluginHost, default_host
from tracebot.service.ratelimit import RateLimiter
from tracebot.service.router import Router
from tracebot.service.service import Service
from tracebot.store import Store


def build_service(
    config: Config,
    outbox: Outbox,
    *,
    store: Store | None = None,
    knowledge: KnowledgeHolder | None = None,
    host: PluginHost | None = None,
    jobs: JobPool | None = None,
    bot_user_id: str | None = None,
    limiter: RateLimiter | None = None,
    durable: bool = True,
) -> Service:
    """``limiter`` is the transport's per-channel rate limiter: answers are scheduled around it.
    ``durable``: accepted work is kept in the store's inbox until answered (False: the console)."""
    store = store or Store(config.db_path)
    knowledge = knowledge or KnowledgeHolder(config.knowledge_dir, config.confidence_threshold)
    jobs = jobs or JobPool(
        workers=config.job_workers,
        max_pending=config.max_pending,
        max_per_lane=config.max_pending_per_channel,
    )
    trace_jobs = JobPool(workers=config.trace_workers, max_pending=config.max_pending, name="tracebot-trace")
    router = Router(host or default_host(), config, knowledge=knowledge, store=store)
    return Service(
        config=config,
        store=store,
        knowledge=knowledge,
        outbox=outbox,
        jobs=jobs,
        trace_jobs=trace_jobs,
        router=router,
        bot_user_id=bot_user_id,
        limiter=limiter,
        durable=durable,
    )
