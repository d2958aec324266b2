"""py-spy plugin: ``/trace pid``. Its grouping (``group.py``), rendering (``render.py``) and stack-to-text
(``knowledge.py``) are shared with the SLURM plugin's ``/trace job``."""

from tracebot.plugin_api import Command, hookimpl


@hookimpl
def register_commands() -> list[Command]:
    # Imported here, not above: the SLURM node dump imports this package on every node of a trace and
    # needs only dump/procs/group, none of the command's rendering.
    from tracebot.plugins.pyspy.command import PID_COMMAND

    return [PID_COMMAND]
