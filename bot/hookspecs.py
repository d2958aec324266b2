"""The hook specifications of tracebot's one plugin host (pluggy project name ``tracebot``).

Plugins implement these with ``@hookimpl`` (``from tracebot import hookimpl``) and are registered
from the built-in list in :mod:`tracebot.service.plugin_host` or, for third-party packages, from the
entry-point group ``tracebot.plugins``. Hooks are called with keyword arguments; a misspelled hook
name fails at registration (``check_pending``). ``tests/test_docs.py`` fails when a hook here is not
documented in the README.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from tracebot.plugin_api import Command

PROJECT = "tracebot"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_commands() -> list[Command]:  # type: ignore[empty-body]
    """Return the ``/trace`` commands this plugin provides (a list of :class:`~tracebot.plugin_api.Command`)."""
