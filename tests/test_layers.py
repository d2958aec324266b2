"""The package's layers, read from the code's own imports: nothing imports upward, nothing goes round in
a circle, plugins see only the plugin API, and pyproject installs every package folder."""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"tracebot": ROOT / "bot", "tracebot.plugins": ROOT / "plugins"}

# Lower numbers are lower layers. Modules of one layer may import each other only inside one package.
LAYERS: dict[str, int] = {
    "tracebot.result": 0, "tracebot.config": 0, "tracebot.ranks": 0, "tracebot.secrets": 0, "tracebot.sizes": 0, "tracebot.markup": 0, "tracebot.notes": 0, "tracebot.procstat": 0, "tracebot.folders": 0,
    "tracebot.knowledge": 1,
    "tracebot.matcher": 2,
    "tracebot.store": 3, "tracebot.render": 3,
    "tracebot.hookspecs": 4,
    "tracebot.plugin_api": 5,
    "tracebot.plugins": 6,
    "tracebot.authoring": 7, "tracebot.service": 7,
    "tracebot.slack": 8, "tracebot.console": 8,
    "tracebot.cli": 9,
}
# What a plugin may import of tracebot: the plugin API and the matcher's public functions.
PLUGIN_MAY_IMPORT = {"tracebot", "tracebot.plugin_api", "tracebot.hookspecs", "tracebot.matcher"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            if package == "tracebot" and name.startswith("tracebot.plugins"):
                continue  # bot/ has no plugins folder; never let one shadow plugins/
            found[name] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(name: str, path: Path) -> set[str]:
    """The tracebot modules ``name`` imports when it runs (imports only for type checkers are left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            out |= submodules
            if len(submodules) < len(node.names):  # names defined in the module itself, not submodules
                out.add(node.module)
        stack.extend(ast.iter_child_nodes(node))
    return {m for m in out if m == "tracebot" or m.startswith(("tracebot.", "bot.", "plugins.")) or m in ("bot", "plugins")}


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> tuple[int, str]:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix], prefix
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def test_every_module_belongs_to_a_layer():
    for name in MODULES:
        if name != "tracebot":
            _layer(name)


def test_nothing_imports_the_folder_names_bot_or_plugins():
    stale = {name: sorted(m for m in mods if m.split(".")[0] in ("bot", "plugins")) for name, mods in IMPORTS.items()}
    assert {k: v for k, v in stale.items() if v} == {}


def test_no_module_imports_a_layer_above_it_or_beside_it():
    wrong = []
    for name, mods in IMPORTS.items():
        if name == "tracebot":
            continue
        level, package = _layer(name)
        for target in mods:
            if target == "tracebot":
                continue
            t_level, t_package = _layer(target)
            if t_level > level or (t_level == level and t_package != package):
                wrong.append(f"{name} ({package}) imports {target} ({t_package})")
    assert wrong == []


def test_plugins_import_only_the_plugin_api_and_the_matchers_public_functions():
    wrong = [
        f"{name} imports {target}"
        for name, mods in IMPORTS.items()
        if name.startswith("tracebot.plugins")
        for target in mods
        if not target.startswith("tracebot.plugins") and target not in PLUGIN_MAY_IMPORT
    ]
    assert wrong == []


def test_the_matcher_never_imports_authoring_service_or_transports():
    for name, mods in IMPORTS.items():
        if name.startswith("tracebot.matcher"):
            assert not {m for m in mods if _layer(m)[0] > LAYERS["tracebot.matcher"]}, name


def test_there_is_no_import_cycle():
    graph = defaultdict(set)
    for name, mods in IMPORTS.items():
        graph[name] = {m for m in mods if m in MODULES and m != name}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join([*path[path.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_pyproject_installs_every_package_folder_under_the_name_tracebot():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"tracebot": "bot", "tracebot.plugins": "plugins"}
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert set(setuptools["packages"]) == packages


@pytest.mark.slow
def test_an_installed_tracebot_has_every_data_file_its_code_reads(tmp_path):
    """``pip install .`` (not editable) installs what the wheel holds: platforms.yaml was left out, so a
    plain install could not train the ranking model ('No such file … matcher/platforms.yaml') and every
    diagnose failed. Every file of a package folder that is not Python must be in the wheel."""
    import shutil
    import subprocess
    import sys
    import zipfile

    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in FOLDERS.values():
        shutil.copytree(folder, tmp_path / folder.name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "dist"), str(tmp_path)], check=True, timeout=240, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("tracebot-*.whl")
    installed = set(zipfile.ZipFile(wheel).namelist())
    data = {f"{package.replace('.', '/')}/{path.relative_to(folder).as_posix()}"
            for package, folder in FOLDERS.items() for path in folder.rglob("*")
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts}
    assert data, "no data files found: the test would check nothing"
    assert data <= installed, f"not installed: {sorted(data - installed)}"
