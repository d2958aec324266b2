"""tracebot: diagnoses multi-GPU training failures from a YAML knowledge base, in Slack and a terminal.

Layers, each importing only those below it (``tests/test_layers.py`` holds this):

- ``result``, ``config``, ``ranks``: plain data and settings
- ``knowledge``: the entry model and loader
- ``matcher``: text and logs in, a ranked :class:`~tracebot.result.Diagnosis` out
- ``store``: the SQLite record of answers and feedback
- ``render``: Block Kit and terminal text from a result
- ``plugin_api``, ``hookspecs``: what a /trace plugin sees (``from tracebot import hookimpl``)
- ``authoring``: knowledge-base tools (lint, eval, compare, draft, import)
- ``service``: the transport-neutral bot
- ``slack``, ``console``, ``cli``: the ways in
"""

from tracebot.plugin_api import hookimpl

__all__ = ["hookimpl"]
