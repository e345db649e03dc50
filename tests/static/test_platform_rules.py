# SPDX-License-Identifier: GPL-3.0-or-later
"""Extensions-platform rules that ruff cannot check, on every .py file that ships, and the manifest.

ruff bans by name in the shipped code (pyproject.toml, ``banned-api``): absolute imports of the
extension's packages, dynamic imports, sys.path changes, network modules, Blender version numbers
and bgl. The rules here need more than a name: the extension's id never imported absolutely, no
bl_info, preferences looked up by ``__package__`` with ``get``, no writes next to the extension's
own files, and portable GPU shaders built only in draw callbacks. Each rule lists every violation
as ``file:line: what`` and is shown to catch a small bad snippet. Plain Python, no bpy; the
installed-copy checks are in tests/install.
"""

import ast
import re
import tomllib
from collections.abc import Callable

import pytest
from shipped import DEV_FOLDERS, REPO, extension_files, parsed

MANIFEST = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
WRITE_CALLS = {
    "write_text",
    "write_bytes",
    "mkdir",
    "makedirs",
    "touch",
    "copy",
    "copy2",
    "copyfile",
    "copytree",
}
# Built-in shaders named the same from 4.2 to 5.2; the 3D_/2D_ prefixed names are gone.
PORTABLE_SHADERS = {"UNIFORM_COLOR", "POLYLINE_UNIFORM_COLOR"}

Rule = Callable[[str, ast.Module], list[str]]


def violations(rule: Rule) -> list[str]:
    """``rule`` over every shipped file."""
    return [found for name, tree in parsed() for found in rule(name, tree)]


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def own_id_imports(name: str, tree: ast.Module) -> list[str]:
    """``import two_bone_ik``, ``from two_bone_ik... import`` and any ``__import__(...)``.

    ruff bans the packages' own names (solver, chain, ...) and importlib.import_module, but not the
    id: it resolves relative imports against the checkout folder's name, so in a checkout named
    two_bone_ik a ban on the id would flag every relative import. ``__import__`` it cannot ban."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{name}:{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] == MANIFEST["id"]
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == MANIFEST["id"]:
                found.append(f"{name}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call) and dotted(node.func) in ("__import__", "builtins.__import__"):
            found.append(f"{name}:{node.lineno}: __import__(...)")
    return found


def bl_info_assignments(name: str, tree: ast.Module) -> list[str]:
    """Any assignment to ``bl_info``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        found += [
            f"{name}:{node.lineno}: bl_info"
            for target in targets
            if isinstance(target, ast.Name) and target.id == "bl_info"
        ]
    return found


def preference_lookups(name: str, tree: ast.Module) -> list[str]:
    """``addons[...]`` and ``addons.get("<literal>")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "addons":
                found.append(f"{name}:{node.lineno}: addons[...] raises KeyError when missing")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "addons"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.append(f"{name}:{node.lineno}: addons.get({node.args[0].value!r}): use __package__")
    return found


def _writes(node: ast.AST) -> list[ast.Call]:
    """Calls in ``node`` that write files: open() in a write mode, Path.write_text/.../mkdir,
    os.makedirs, shutil.copy*."""
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        builtin_open = isinstance(call.func, ast.Name) and call.func.id == "open"
        if builtin_open or (isinstance(call.func, ast.Attribute) and call.func.attr == "open"):
            position = 1 if builtin_open else 0  # open(path, mode) or Path.open(mode)
            mode = call.args[position] if len(call.args) > position else None
            mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
            if (
                isinstance(mode, ast.Constant)
                and isinstance(mode.value, str)
                and set(mode.value) & set("wax+")
            ):
                found.append(call)
        elif isinstance(call.func, ast.Attribute) and call.func.attr in WRITE_CALLS:
            found.append(call)
    return found


def _uses_own_location(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("__file__", "__path__") for n in ast.walk(node))


def writes_near_own_files(name: str, tree: ast.Module) -> list[str]:
    """File writes in a function (or the module's top level) that knows its own location."""
    found = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    module_level = [
        n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    for scope in scopes:
        body = module_level if scope is tree else [scope]
        if any(_uses_own_location(n) for n in body):
            for n in body:
                found += [f"{name}:{call.lineno}: writes near __file__" for call in _writes(n)]
    return found


def string_constants(trees) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments of ``trees`` (shader names live in compat.py)."""
    return {
        target.id: node.value.value
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def from_builtin_calls(tree: ast.Module) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and dotted(node.func).endswith("shader.from_builtin")
    ]


def shader_problems(name: str, tree: ast.Module, constants: dict[str, str] | None = None) -> list[str]:
    """``gpu.shader.from_builtin`` with a name not in PORTABLE_SHADERS or its config not by keyword,
    and any ``gpu.shader`` call at module level. A shader name given as a constant is looked up in
    ``constants`` (default: the file's own)."""
    constants = string_constants([tree]) if constants is None else constants
    found = []
    for node in from_builtin_calls(tree):
        if len(node.args) != 1 or any(k.arg is None for k in node.keywords):
            found.append(f"{name}:{node.lineno}: from_builtin takes the name only, config by keyword")
        argument = node.args[0] if node.args else None
        if isinstance(argument, ast.Constant):
            value = argument.value
        elif isinstance(argument, ast.Name):
            value = constants.get(argument.id)
        else:
            value = None
        if value not in PORTABLE_SHADERS:
            found.append(f"{name}:{node.lineno}: shader {value!r} is not one of {sorted(PORTABLE_SHADERS)}")
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if any(
            isinstance(inner, ast.Call) and "gpu.shader" in dotted(inner.func)
            for inner in ast.walk(statement)
        ):
            found.append(f"{name}:{statement.lineno}: gpu.shader called at module level")
    return found


def test_the_extension_has_source_files():
    """The scan below sees the extension (a guard against scanning nothing)."""
    names = {path.relative_to(REPO).as_posix() for path in extension_files()}
    assert {"__init__.py", "chain/__init__.py", "solver/__init__.py", "ui/overlay.py"} <= names


def test_the_extension_id_is_never_imported_absolutely():
    """No ``import two_bone_ik`` nor ``__import__``: an installed extension is
    ``bl_ext.<repository>.two_bone_ik``, so only relative imports find our modules."""
    assert violations(own_id_imports) == []


def test_no_bl_info():
    """Extensions take their metadata from blender_manifest.toml; a ``bl_info`` is ignored (and warned
    about) by Blender, so none may exist."""
    assert violations(bl_info_assignments) == []


def test_preferences_are_looked_up_by_package_with_get():
    """``context.preferences.addons.get(__package__)`` (None when the module is registered outside
    the add-on system, or after factory settings), never ``addons[...]`` (KeyError) nor a literal
    module name (the installed name is ``bl_ext.<repository>.two_bone_ik``)."""
    assert violations(preference_lookups) == []


def test_no_writes_next_to_the_extensions_files():
    """An installed extension's folder may be read-only and is replaced on update: code that knows its
    own location (``__file__``, ``__path__``) never writes files. Writable data goes under
    ``bpy.utils.extension_path_user(__package__, create=True)``. (tests/install checks the installed
    folder is unchanged after a session.)"""
    assert violations(writes_near_own_files) == []


def test_gpu_shaders_are_portable_and_built_in_draw_callbacks():
    """Only shader names valid on 4.2-5.2, config passed by keyword; gpu.shader is never called at
    module level (creating a shader raises SystemError in background mode)."""
    files = parsed()
    constants = string_constants(tree for _, tree in files)
    assert [found for name, tree in files for found in shader_problems(name, tree, constants)] == []
    assert any(from_builtin_calls(tree) for _, tree in files), (
        "no from_builtin call found: the scan is broken"
    )
    assert constants.get("WIDE_LINE_SHADER") in PORTABLE_SHADERS


# Each rule against a small source that breaks it, and one that keeps it.
BROKEN = [
    pytest.param(own_id_imports, "import two_bone_ik.solver\n", id="import-id"),
    pytest.param(own_id_imports, "from two_bone_ik.chain import compat\n", id="from-id-import"),
    pytest.param(own_id_imports, "solver = __import__('solver')\n", id="dunder-import"),
    pytest.param(bl_info_assignments, "bl_info = {'name': 'Two-Bone IK'}\n", id="bl_info"),
    pytest.param(bl_info_assignments, "bl_info: dict = {}\n", id="bl_info-annotated"),
    pytest.param(
        preference_lookups, "prefs = context.preferences.addons[__package__]\n", id="addons-subscript"
    ),
    pytest.param(
        preference_lookups, "prefs = context.preferences.addons.get('two_bone_ik')\n", id="addons-literal"
    ),
    pytest.param(
        writes_near_own_files,
        "import pathlib\n\n\ndef save():\n"
        "    pathlib.Path(__file__).with_name('cache.txt').write_text('x')\n",
        id="write_text-in-function",
    ),
    pytest.param(
        writes_near_own_files,
        "import os\n\nHERE = os.path.dirname(__file__)\n"
        "with open(os.path.join(HERE, 'log'), 'a') as f:\n    pass\n",
        id="open-append-at-module-level",
    ),
    pytest.param(
        shader_problems,
        "import gpu\n\nSHADER = gpu.shader.from_builtin('UNIFORM_COLOR')\n",
        id="module-level",
    ),
    pytest.param(
        shader_problems,
        "import gpu\n\n\ndef draw():\n    gpu.shader.from_builtin('3D_UNIFORM_COLOR')\n",
        id="old-name",
    ),
    pytest.param(
        shader_problems,
        "import gpu\n\nNAME = '2D_IMAGE'\n\n\ndef draw():\n    gpu.shader.from_builtin(NAME)\n",
        id="old-name-constant",
    ),
    pytest.param(
        shader_problems,
        "import gpu\n\n\ndef draw():\n    gpu.shader.from_builtin('UNIFORM_COLOR', 'DEFAULT')\n",
        id="config-by-position",
    ),
]
KEPT = [
    pytest.param(
        own_id_imports, "from ..solver import solve_two_bone_ik\nfrom . import compat\n", id="relative"
    ),
    pytest.param(bl_info_assignments, "info = {'name': 'Two-Bone IK'}\n", id="no-bl_info"),
    pytest.param(
        preference_lookups, "prefs = context.preferences.addons.get(__package__)\n", id="get-package"
    ),
    pytest.param(
        writes_near_own_files,
        "import pathlib\n\n\ndef load():\n"
        "    return pathlib.Path(__file__).with_name('data.txt').read_text()\n",
        id="read-near-file",
    ),
    pytest.param(
        shader_problems,
        "import gpu\n\nNAME = 'POLYLINE_UNIFORM_COLOR'\n\n\ndef draw():\n"
        "    return gpu.shader.from_builtin(NAME, config='DEFAULT')\n",
        id="portable-in-callback",
    ),
]


@pytest.mark.parametrize(("rule", "source"), BROKEN)
def test_each_rule_finds_a_violation(rule: Rule, source: str):
    """A rule that found nothing in the extension can still fail: it reports this broken snippet."""
    assert rule("snippet.py", ast.parse(source)) != []


@pytest.mark.parametrize(("rule", "source"), KEPT)
def test_each_rule_accepts_the_right_way(rule: Rule, source: str):
    """The way the docstrings above ask for passes the rule."""
    assert rule("snippet.py", ast.parse(source)) == []


def test_manifest_asks_for_no_permissions():
    """No [permissions]: the extension needs no network, files outside Blender, clipboard or camera."""
    assert "permissions" not in MANIFEST


def test_manifest_identity():
    """id, an add-on for Blender 4.2 and later, GPL-3.0-or-later, no wheels."""
    assert MANIFEST["schema_version"] == "1.0.0"
    assert MANIFEST["id"] == "two_bone_ik"
    assert MANIFEST["type"] == "add-on"
    assert MANIFEST["blender_version_min"] == "4.2.0"
    assert "blender_version_max" not in MANIFEST
    assert MANIFEST["license"] == ["SPDX:GPL-3.0-or-later"]
    assert "wheels" not in MANIFEST


def test_manifest_version_is_the_changelogs_latest_release():
    """The version the zip is built as (its file name and Blender's listing) is the one CHANGELOG.md's
    newest released entry names: a release bumps both, or neither."""
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)
    assert releases, "CHANGELOG.md names no release ('## [x.y.z] - YYYY-MM-DD')"
    assert MANIFEST["version"] == releases[0]


def test_manifest_build_leaves_development_folders_out():
    """[build] paths_exclude_pattern names every development folder (tests/install checks the zip)."""
    patterns = set(MANIFEST["build"]["paths_exclude_pattern"])
    for folder in sorted(DEV_FOLDERS):
        assert f"/{folder}/" in patterns
    assert {"__pycache__/", ".*", "/pyproject.toml", "/requirements*.txt"} <= patterns
