"""tracebot: diagnoses multi-GPU training failures from a YAML knowledge base, in Slack and a terminal.

Layers, each importing only those below it (``tests/test_layers.py`` holds this):

- ``result``, ``config``, ``ranks``, ``secrets``: plain data, settings, small helpers
- ``knowledge``: the entry model and loader
- ``matcher``: text and logs in, a ranked :class:`~tracebot.result.Diagnosis` out
- ``store`` and ``render``: the SQLite record; Block Kit and terminal text from a result
- ``hookspecs`` and ``plugin_api``: what a /trace plugin sees (``from tracebot import hookimpl``)
- ``plugins``: the built-in plugins, which see only the plugin API and the matcher's public functions
- ``authoring`` and ``service``: knowledge-base tools; the transport-neutral bot
- ``slack`` and ``console``: the ways in
- ``cli``: the command line over all of it
"""

from typing import Any

__all__ = ["hookimpl"]


def __getattr__(name: str) -> Any:
    # Lazily, so that importing tracebot.result does not load the plugin machinery.
    if name == "hookimpl":
        from tracebot.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(f"module 'tracebot' has no attribute {name!r}")
