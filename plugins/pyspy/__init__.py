"""py-spy plugin: ``/trace pid``. Its grouping (``group.py``), rendering (``render.py``) and stack-to-text
(``knowledge.py``) are shared with the SLURM plugin's ``/trace job``."""

from tracebot.plugins.pyspy.command import register_commands

__all__ = ["register_commands"]
