"""SLURM plugin: ``/trace job <id>`` (state, reasons, log errors, py-spy hang trace of every rank) and
``/trace gpus <node>`` (GPU processes no running job owns). See README "SLURM"."""

from tracebot.plugin_api import Command, hookimpl
from tracebot.plugins.slurm.command import GPUS_COMMAND, JOB_COMMAND


@hookimpl
def register_commands() -> list[Command]:
    return [JOB_COMMAND, GPUS_COMMAND]
