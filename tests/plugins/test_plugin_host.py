"""The plugin host: commands come from built-ins, temporary plugins and real entry points, and no plugin
failure (import, registration, listing, run, overrun) takes tracebot down or leaks a secret."""

from __future__ import annotations

import inspect
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

from tests.support import entry_dict, write_kb
from tracebot import hookspecs
from tracebot.config import Config
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher
from tracebot.plugin_api import Caller, Command, NotAllowed, UsageError, combine_into, hookimpl
from tracebot.result import Result
from tracebot.service.plugin_host import PluginHost
from tracebot.service.router import Router


def _plugin(*commands: Command) -> types.SimpleNamespace:
    @hookimpl
    def register_commands() -> list[Command]:
        return list(commands)

    return types.SimpleNamespace(register_commands=register_commands)


def _echo_parse(words: list[str]) -> dict[str, object]:
    if not words:
        raise UsageError("Say something.")
    return {"text": " ".join(words)}


ECHO = Command(name="echo", usage="/trace echo <text>", help="Repeat the words.", parse=_echo_parse,
               run=lambda ctx, text: Result(title="echo", summary=text))


def test_a_registered_plugin_adds_its_command_and_it_runs(host, register_plugin, make_ctx):
    register_plugin(_plugin(ECHO), "echo-plugin")
    assert {"echo", "pid"} <= set(host.get_commands())
    assert host.run_command("echo", make_ctx(), ["hello", "there"]).summary == "hello there"


def test_the_temporary_plugin_is_gone_after_unregistering(host, register_plugin):
    register_plugin(_plugin(ECHO), "echo-plugin")
    host.unregister(name="echo-plugin")
    assert "echo" not in host.get_commands()


def test_bad_arguments_give_the_usage_not_an_exception(host, register_plugin, make_ctx):
    register_plugin(_plugin(ECHO), "echo-plugin")
    result = host.run_command("echo", make_ctx(), [])
    assert result.status == "error"
    assert "Say something." in result.summary and "/trace echo <text>" in result.summary


def test_unknown_command_lists_the_commands_there_are(host, make_ctx):
    result = host.run_command("jbo", make_ctx(), ["1"])
    assert result.status == "error" and "pid" in result.summary


def test_help_lists_every_command_with_its_usage(host, register_plugin):
    register_plugin(_plugin(ECHO), "echo-plugin")
    result = Router(host, Config()).run_text("help", Caller())
    plugins = next(s.text for s in result.sections if s.title == "Commands")
    built_in = next(s.text for s in result.sections if s.title == "Built in")
    assert "/trace echo <text>" in plugins and "/trace pid <pid>" in plugins
    assert "/trace diagnose <error text>" in built_in and "/trace echo" not in built_in


def test_in_a_terminal_the_host_names_every_command_as_a_shell_types_it(host, register_plugin):
    """Usage lines, titles, help and refusals say `tracebot trace …` where the router takes terminal commands
    (the CLI once rewrote only the usage line of a parse error, by string replacement, after the fact: a
    plugin's UsageError raised while running, the titles and `help` still said `/trace …`)."""

    def late(ctx, text):
        raise UsageError(f"{text!r} is no node here.")

    register_plugin(_plugin(ECHO, Command(name="late", usage="/trace late <node>", help="Fails late.",
                                          parse=_echo_parse, run=late),
                            Command(name="drain", usage="/trace drain", help="Admins.", parse=lambda w: {},
                                    run=lambda ctx: Result(title="drain", summary="drained"), admin_only=True)),
                    "terminal-plugin")
    terminal, slack = Router(host, Config(), typed_as="tracebot trace"), Router(host, Config())
    shown = {}
    for words in ("echo", "late n1", "drain", "nosuch", "help"):
        result = terminal.run_text(words, Caller())
        shown[words] = result.title + "\n" + result.summary + "\n" + "\n".join(s.text for s in result.sections)
        assert "/trace" not in shown[words].replace("(in Slack: `/trace <command>`)", ""), shown[words]
        assert result.title.startswith("tracebot trace "), result.title
        assert "`/trace" in slack.run_text(words, Caller()).summary + "\n".join(
            s.text for s in slack.run_text(words, Caller()).sections), words
    assert "Usage: `tracebot trace echo <text>`" in shown["echo"]
    assert "is no node here." in shown["late n1"] and "Usage: `tracebot trace late <node>`" in shown["late n1"]
    assert "`tracebot trace drain` is for admins only." in shown["drain"]
    assert "Usage: `tracebot trace help`" in shown["nosuch"]
    assert "`tracebot trace echo <text>`  Repeat the words." in shown["help"]


def test_a_plugin_that_fails_to_import_is_reported_and_the_others_still_work(tmp_path, monkeypatch, make_ctx):
    (tmp_path / "half_written_plugin.py").write_text("raise RuntimeError('not finished yet')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    host = PluginHost(builtins=("half_written_plugin", "tracebot.plugins.pyspy"), entry_points=False)
    assert any("half_written_plugin" in e and "not finished yet" in e for e in host.load_errors())
    assert "pid" in host.get_commands()


def test_help_names_a_plugin_that_failed_to_load_only_to_admins(tmp_path, monkeypatch):
    """`/trace help` is posted where it was typed: the load error (a traceback's words, the plugin's path on
    the server) was shown to the whole channel. Admins see it, as in App Home; others are told to ask one."""
    (tmp_path / "half_written_plugin.py").write_text("raise RuntimeError('not finished yet')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    router = Router(PluginHost(builtins=("half_written_plugin", "tracebot.plugins.pyspy"), entry_points=False),
                    Config())

    def shown(caller: Caller) -> str:
        result = router.run_text("help", caller)
        return "\n".join([result.summary, *(f"{s.title}\n{s.text}" for s in result.sections)])

    everyone = shown(Caller("U1", "alice"))
    assert "not finished yet" not in everyone and "half_written_plugin" not in everyone, everyone
    assert "Some commands are unavailable: a plugin did not load. Ask an admin." in everyone
    assert "/trace pid" in everyone
    admin = shown(Caller("U2", None, is_admin=True))
    assert "half_written_plugin" in admin and "not finished yet" in admin


def test_a_plugin_whose_command_listing_raises_is_reported_and_the_others_still_work(host, register_plugin):
    @hookimpl
    def register_commands() -> list[Command]:
        raise KeyError("missing setting")

    register_plugin(types.SimpleNamespace(register_commands=register_commands), "broken-listing")
    assert "pid" in host.get_commands()
    assert any("broken-listing" in e and "missing setting" in e for e in host.load_errors())


def test_a_misspelled_hook_is_refused_at_registration_and_reported(host):
    @hookimpl
    def register_comands() -> list[Command]:
        return [ECHO]

    assert not host.register(types.SimpleNamespace(register_comands=register_comands), name="typo")
    assert host.pm.get_plugin("typo") is None
    assert any("typo" in e and "register_comands" in e for e in host.load_errors())


def test_a_second_plugin_cannot_take_over_a_builtin_command_name(host, register_plugin, make_ctx):
    impostor = Command(name="pid", usage="/trace pid", help="", parse=lambda w: {},
                       run=lambda ctx: Result(title="impostor", summary="gotcha"))
    register_plugin(_plugin(impostor), "impostor")
    assert host.get_commands()["pid"].run is not impostor.run
    assert any("impostor" in e and "already provided" in e for e in host.load_errors())


def test_a_command_that_raises_gives_an_error_result_without_the_secret(host, register_plugin, make_ctx):
    token = "xoxb-1111-2222-abcdefSECRET"

    def run(ctx, **_):
        raise RuntimeError(f"could not connect with {token} and xoxp-9-9-other")

    register_plugin(_plugin(Command(name="leaky", usage="/trace leaky", help="", parse=lambda w: {}, run=run)),
                    "leaky")
    result = host.run_command("leaky", make_ctx(secrets=Config(slack_bot_token=token).secrets()), [])
    assert result.status == "error"
    assert "RuntimeError: could not connect" in result.summary
    assert "SECRET" not in result.summary and "xoxp-9" not in result.summary


def test_a_command_that_overruns_its_time_limit_is_answered_at_the_deadline(host, register_plugin, make_ctx):
    release = threading.Event()
    stuck = Command(name="stuck", usage="/trace stuck", help="", parse=lambda w: {}, timeout_s=0.5,
                    run=lambda ctx: Result(title="late", summary=str(release.wait(30))))
    register_plugin(_plugin(stuck), "stuck")
    started = time.monotonic()
    try:
        result = host.run_command("stuck", make_ctx(), [])
    finally:
        release.set()
    assert time.monotonic() - started < 5
    assert result.status == "error" and "time limit (0.5s)" in result.summary


def test_admin_only_commands_are_refused_to_others_and_run_for_admins(host, register_plugin, make_ctx):
    drain = Command(name="drain", usage="/trace drain", help="", parse=lambda w: {}, admin_only=True,
                    run=lambda ctx: Result(title="drain", summary="drained"))
    register_plugin(_plugin(drain), "drain")
    assert "admins only" in host.run_command("drain", make_ctx(is_admin=False), []).summary
    assert host.run_command("drain", make_ctx(is_admin=True), []).summary == "drained"


def test_not_allowed_raised_by_a_command_is_shown_as_is(host, register_plugin, make_ctx):
    def run(ctx):
        raise NotAllowed("That job belongs to someone else.")

    register_plugin(_plugin(Command(name="mine", usage="/trace mine", help="", parse=lambda w: {}, run=run)),
                    "mine")
    result = host.run_command("mine", make_ctx(), [])
    assert result.status == "error" and result.summary == "That job belongs to someone else."


def _write_dist(site: Path, dist: str, module: str, module_source: str) -> None:
    """What ``pip install`` leaves behind: the module and a .dist-info with entry_points.txt."""
    (site / f"{module}.py").write_text(textwrap.dedent(module_source))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # pip's escaping: '-' would end the name
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[tracebot.plugins]\n{dist} = {module}\n")


def test_an_installed_package_adds_its_command_through_the_entry_point_group(tmp_path, monkeypatch, make_ctx):
    _write_dist(tmp_path, "tracebot-hello", "tracebot_hello", """
        from tracebot.plugin_api import Command, hookimpl
        from tracebot.result import Result

        @hookimpl
        def register_commands():
            return [Command(name="hello", usage="/trace hello", help="Say hello.", parse=lambda w: {},
                            run=lambda ctx: Result(title="hello", summary="hello from a package"))]
    """)
    _write_dist(tmp_path, "tracebot-broken", "tracebot_broken", "import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    host = PluginHost(builtins=(), entry_points=True)
    assert host.run_command("hello", make_ctx(), []).summary == "hello from a package"
    assert any("tracebot-broken" in e and "no_such_module_anywhere" in e for e in host.load_errors())
    sys.modules.pop("tracebot_hello", None)


@pytest.mark.parametrize("off", ["0", "off", "false", "No"])
def test_entry_points_stay_off_when_switched_off_in_any_of_the_usual_words(tmp_path, monkeypatch, off):
    # only "0" switched them off: TRACEBOT_LOAD_ENTRYPOINTS=off loaded every installed plugin
    _write_dist(tmp_path, "tracebot-hello2", "tracebot_hello2", "raise SystemError('must not load')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TRACEBOT_LOAD_ENTRYPOINTS", off)
    assert PluginHost(builtins=()).load_errors() == []


def test_without_a_knowledge_base_the_result_says_no_entries_were_matched(make_ctx):
    ctx = make_ctx(matcher=None)
    result = combine_into(Result(title="t", summary="s"), [ctx.match("stuck in all_reduce")])
    assert result.matches == [] and any("knowledge base not loaded" in n for n in result.data["notes"])


@pytest.fixture
def small_kb(tmp_path: Path) -> Matcher:
    anchor = "stuck in all_reduce (torch/distributed/distributed_c10d.py)"
    kb, errors = load_knowledge_base(write_kb(tmp_path / "kb", [entry_dict(
        "stuck-collective", recognise={"anchors": [anchor]}, examples={"match": [f"rank 0 {anchor}"]})]))
    assert not errors, errors
    return Matcher(kb)


def test_what_a_plugin_found_brings_the_matching_knowledge_entry_once(make_ctx, small_kb):
    ctx = make_ctx(matcher=small_kb)
    text = "py-spy: ranks 0, 2–63 stuck in all_reduce (torch/distributed/distributed_c10d.py)"
    result = combine_into(Result(title="t", summary="s"), [ctx.match(text)])
    result = combine_into(result, [ctx.match(text)])
    assert [m.entry_id for m in result.matches] == ["stuck-collective"]
    assert result.matches[0].fix, "the match carries the entry's fix"
    assert combine_into(Result(title="t", summary="s"), [ctx.match("all ranks finished")]).matches == []


def test_every_hook_spec_is_documented_and_has_a_plugin_in_these_tests():
    source = Path(__file__).read_text()
    specs = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if hasattr(fn, "tracebot_spec")]
    assert specs
    for name in specs:
        assert (getattr(hookspecs, name).__doc__ or "").strip(), f"hook {name} has no docstring"
        assert f"def {name}(" in source, f"hook {name} has no test plugin here"


def test_the_plugin_example_in_the_readme_works(host, register_plugin, make_ctx):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Writing a /trace plugin", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = types.ModuleType("readme_plugin")
    exec(compile(code, "README.md", "exec"), example.__dict__)  # the README's own example, not input
    register_plugin(example, "readme-plugin")
    assert host.run_command("node", make_ctx(), ["3"]).summary == "all quiet"
    assert "Give one node number." in host.run_command("node", make_ctx(), ["x"]).summary
