"""The README documents every hook (with its signature), every /trace command (with its usage line) and
every subcommand of the command line, so the docs cannot drift from the code (datasette's test_docs)."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

import pytest

from tracebot import hookspecs
from tracebot.cli import build_parser
from tracebot.config import Config
from tracebot.service.plugin_host import BUILTIN_PLUGINS, PluginHost
from tracebot.service.router import Router

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _hooks() -> list[str]:
    return [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(fn, "tracebot_spec")]


def _commands():
    host = PluginHost(builtins=BUILTIN_PLUGINS, entry_points=False)
    Router(host, Config())  # registers the built-in commands on the same hook
    return host.get_commands().values()


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "tracebot") -> list[str]:
    found = []
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(f"{prefix} {name}")
                found += _subcommands(sub, f"{prefix} {name}")
    return found


@pytest.mark.parametrize("hook", _hooks())
def test_every_hook_is_documented_with_its_signature(hook):
    fn = getattr(hookspecs, hook)
    params = ", ".join(inspect.signature(fn).parameters)
    assert f"`{hook}({params})" in README, f"README: document the hook as `{hook}({params}) -> …`"
    assert (fn.__doc__ or "").strip(), f"hook {hook} has no docstring"


@pytest.mark.parametrize("usage", sorted(c.usage for c in _commands()))
def test_every_trace_command_is_documented_with_its_usage(usage):
    assert f"`{usage}`" in README


@pytest.mark.parametrize("command", _subcommands(build_parser()))
def test_every_command_line_subcommand_is_documented(command):
    assert f"`{command}" in README


def test_the_example_tracebot_config_in_the_readme_is_one_tracebot_accepts(tmp_path):
    import re

    from tracebot.config import Config

    block = re.search(r"```yaml\n(# TRACEBOT_CONFIG example.*?)```", README, re.S)
    assert block, "README: the example TRACEBOT_CONFIG block"
    path = tmp_path / "tracebot.yaml"
    path.write_text(block.group(1), encoding="utf-8")
    cfg = Config.from_env({"TRACEBOT_CONFIG": str(path)})
    assert cfg.admins == {"U0ADMIN"} and cfg.user_map["U0ALICE"] == "alice"
    assert cfg.channels.may_trace("C0INFRA") and not cfg.channels.may_trace("C0RANDOM")
    assert cfg.channels.may_auto_reply("C0TRAINING") and not cfg.channels.may_auto_reply("C0INFRA")
    assert cfg.plugin_settings("sagemaker")["allow"]["team-a"] == ["team-a-*"]
