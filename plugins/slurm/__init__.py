"""SLURM plugin: ``/trace job <id>`` (state, reasons, log errors, py-spy hang trace of every rank) and
``/trace gpus <node>`` (GPU processes no running job owns). See README "SLURM"."""

from tracebot.plugin_api import Command, hookimpl


@hookimpl
def register_commands() -> list[Command]:
    # Imported here, not above: ``python -m tracebot.plugins.slurm.node_dump`` runs on every node of a
    # traced job and must start fast; it needs none of the command's modules.
    from tracebot.plugins.slurm.command import GPUS_COMMAND, JOB_COMMAND

    return [JOB_COMMAND, GPUS_COMMAND]
