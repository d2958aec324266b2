"""Match pasted text and logs against the knowledge base. Knows nothing about Slack.

The public functions (what the service, the authoring tools and plugins may use):

- :class:`Matcher` (``diagnose``, ``diagnose_file``, ``search``) and :func:`load_matcher`
- :func:`combine` and :func:`rank`: one diagnosis from several parts, in the one order
- :class:`ModelUnavailable`: the ranking model could not be made when a text needed it
- :func:`entry_match`: what an entry says, as a :class:`~tracebot.result.Match`
- :func:`scan_log` (``tracebot.matcher.logscan``): the first errors of a log file of any size
"""


from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracebot.matcher.core import Matcher, entry_match
    from tracebot.matcher.loading import load_matcher
    from tracebot.matcher.ranking import combine, rank

__all__ = ["Matcher", "ModelUnavailable", "combine", "entry_match", "load_matcher", "rank"]

# Imported on first use (PEP 562): the log scanner needs none of the matcher's model (SciPy, for
# training: ~0.5 s of start-up), so a /trace job's scan does not pay for it.
_HOME = {"Matcher": "core", "entry_match": "core", "load_matcher": "loading", "combine": "ranking", "rank": "ranking"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"tracebot.matcher.{_HOME[name]}"), name)
    raise AttributeError(f"module 'tracebot.matcher' has no attribute {name!r}")


class ModelUnavailable(RuntimeError):
    """The ranking model, deferred until a text needed it (:meth:`Matcher.defer_model`), failed to load or
    train. Here, not in ``core``: the CLI catches it to explain it, without importing the matcher."""
