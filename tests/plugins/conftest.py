"""Shared plugin fixtures: a fresh plugin host without third-party plugins, a datasette-style fixture
that registers a temporary plugin and always unregisters it, and contexts for callers."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tracebot.plugin_api import Caller, CommandContext
from tracebot.service.plugin_host import PluginHost


@pytest.fixture
def host() -> PluginHost:
    """Only the py-spy built-in, no entry points: tests see exactly the plugins they register."""
    return PluginHost(builtins=("tracebot.plugins.pyspy",), entry_points=False)


@pytest.fixture
def register_plugin(host: PluginHost) -> Iterator[Callable[[object, str], None]]:
    registered: list[str] = []

    def register(plugin: object, name: str) -> None:
        assert host.register(plugin, name=name), host.load_errors()
        registered.append(name)

    try:
        yield register
    finally:
        for name in registered:
            if host.pm.get_plugin(name) is not None:
                host.unregister(name=name)


@pytest.fixture
def make_ctx() -> Callable[..., CommandContext]:
    def make(cluster_user: str | None = "root", is_admin: bool = False, settings: dict | None = None,
             matcher: object | None = None, secrets: list[str] | None = None) -> CommandContext:
        return CommandContext(caller=Caller(slack_user="U1", cluster_user=cluster_user, is_admin=is_admin),
                              settings=settings or {}, matcher=matcher,  # type: ignore[arg-type]
                              secrets=secrets or [])

    return make
