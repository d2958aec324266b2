"""Match pasted text and logs against the knowledge base. Knows nothing about Slack.

The public functions (what the service, the authoring tools and plugins may use):

- :class:`Matcher` (``diagnose``, ``diagnose_file``, ``search``) and :func:`load_matcher`
- :func:`combine` and :func:`rank`: one diagnosis from several parts, in the one order
- :func:`entry_match`: what an entry says, as a :class:`~tracebot.result.Match`
- :func:`scan_log` (``tracebot.matcher.logscan``): the first errors of a log file of any size
"""

from tracebot.matcher.core import Matcher, entry_match
from tracebot.matcher.loading import load_matcher
from tracebot.matcher.ranking import combine, rank

__all__ = ["Matcher", "combine", "entry_match", "load_matcher", "rank"]
