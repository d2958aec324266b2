"""Every built-in /trace command presents itself the same way in `/trace help` and usage errors."""

from __future__ import annotations

from tracebot.service.plugin_host import BUILTIN_PLUGINS, PluginHost


def test_builtin_plugins_load_and_declare_complete_commands():
    host = PluginHost(builtins=BUILTIN_PLUGINS, entry_points=None)
    assert host.load_errors() == []
    commands = host.get_commands()
    assert {"job", "gpus", "pid", "sagemaker"} <= set(commands)
    for name, cmd in commands.items():
        assert cmd.usage.startswith(f"/trace {name}"), cmd.usage
        assert cmd.help and 0 < cmd.timeout_s <= 600
