"""The transport-neutral ``/trace`` router: Slack, the console and tests all go through it."""

from bot.commands.router import BUILTINS, Plan, TraceRouter

__all__ = ["BUILTINS", "Plan", "TraceRouter"]
