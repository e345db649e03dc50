# SPDX-License-Identifier: GPL-3.0-or-later
"""Extensions-platform rules, checked on the extension's source (every .py file that ships).

Relative imports only, no bl_info, preferences looked up by ``__package__`` (C22), no sys.path
changes, no network, no writes next to the extension's own files, no version-number comparisons
(feature-test instead, in driver/compat.py), and a manifest that asks for no permissions. Each
test lists every violation as ``file:line: what``; the installed-copy checks are in tests/install.
"""

import ast
import pathlib
import tomllib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Root folders that are for development and never ship (see [build] in blender_manifest.toml).
DEV_FOLDERS = {"tests", "tools", "bench", "demo", "docs", "out", "dist", "build", "requirements"}
# Standard-library and third-party modules that reach the network.
NETWORK_MODULES = {
    "socket",
    "ssl",
    "http",
    "urllib.request",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
    "poplib",
    "imaplib",
    "telnetlib",
    "xmlrpc",
    "webbrowser",
    "socketserver",
}
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


def extension_files() -> list[pathlib.Path]:
    """Every .py file of the extension: the root __init__.py and the packages that ship."""
    files = []
    for path in sorted(REPO.rglob("*.py")):
        relative = path.relative_to(REPO)
        if relative.parts[0] in DEV_FOLDERS or any(
            part.startswith(".") or part == "__pycache__" for part in relative.parts
        ):
            continue
        files.append(path)
    return files


def own_names() -> set[str]:
    """Names our code could be imported by absolutely: the id and the top-level packages."""
    names = {"two_bone_ik", "bl_ext"}
    for path in REPO.iterdir():
        if path.is_dir() and (path / "__init__.py").is_file() and path.name not in DEV_FOLDERS:
            names.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            names.add(path.stem)
    return names


def parsed() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in extension_files()
    ]


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


def test_the_extension_has_source_files():
    """The scan below sees the extension (a guard against scanning nothing)."""
    names = {path.relative_to(REPO).as_posix() for path in extension_files()}
    assert {"__init__.py", "driver/__init__.py", "solver/__init__.py"} <= names


def test_imports_of_our_own_code_are_relative():
    """No ``import two_bone_ik``, ``from solver import ...`` or ``import driver``: an installed
    extension is ``bl_ext.<repository>.two_bone_ik``, so only relative imports find our modules."""
    ours = own_names()
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ours:
                        violations.append(f"{name}:{node.lineno}: import {alias.name}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] in ours:
                    violations.append(f"{name}:{node.lineno}: from {node.module} import ...")
            elif isinstance(node, ast.Call) and dotted(node.func) in (
                "importlib.import_module",
                "__import__",
            ):
                argument = node.args[0] if node.args else None
                if isinstance(argument, ast.Constant) and str(argument.value).split(".")[0] in ours:
                    violations.append(f"{name}:{node.lineno}: {dotted(node.func)}({argument.value!r})")
    assert violations == []


def test_no_bl_info():
    """Extensions take their metadata from blender_manifest.toml; a ``bl_info`` is ignored (and warned
    about) by Blender, so none may exist."""
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            violations += [
                f"{name}:{node.lineno}: bl_info"
                for target in targets
                if isinstance(target, ast.Name) and target.id == "bl_info"
            ]
    assert violations == []


def test_preferences_are_looked_up_by_package_with_get():
    """C22: ``context.preferences.addons.get(__package__)`` (None when the module is registered outside
    the add-on system, or after factory settings), never ``addons[...]`` (KeyError) nor a literal
    module name (the installed name is ``bl_ext.<repository>.two_bone_ik``)."""
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
                if node.value.attr == "addons":
                    violations.append(f"{name}:{node.lineno}: addons[...] raises KeyError when missing")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "addons"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                violations.append(
                    f"{name}:{node.lineno}: addons.get({node.args[0].value!r}): use __package__"
                )
    assert violations == []


def test_no_sys_path_changes():
    """Extension code never edits sys.path (or calls site.addsitedir): bundled modules go in as wheels
    listed in the manifest, and our own code is imported relatively."""
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = dotted(node.func.value)
                if (
                    owner in ("sys.path", "sys.meta_path", "sys.path_hooks")
                    or dotted(node.func) == "site.addsitedir"
                ):
                    violations.append(f"{name}:{node.lineno}: {dotted(node.func)}(...)")
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                base = target.value if isinstance(target, ast.Subscript) else target
                if dotted(base) in ("sys.path", "sys.meta_path", "sys.path_hooks"):
                    violations.append(f"{name}:{node.lineno}: assignment to {dotted(base)}")
    assert violations == []


def test_no_network_access():
    """The manifest asks for no network permission, so no module of ours imports a network library."""
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for module in modules:
                if any(module == bad or module.startswith(bad + ".") for bad in NETWORK_MODULES):
                    violations.append(f"{name}:{node.lineno}: imports {module}")
    assert violations == []


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


def test_no_writes_next_to_the_extensions_files():
    """An installed extension's folder may be read-only and is replaced on update: code that knows its
    own location (``__file__``, ``__path__``) never writes files. Writable data goes under
    ``bpy.utils.extension_path_user(__package__, create=True)``. (tests/install checks the installed
    folder is unchanged after a session.)"""
    violations = []
    for name, tree in parsed():
        scopes = [
            tree,
            *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        ]
        module_level = [
            n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]
        for scope in scopes:
            body = module_level if scope is tree else [scope]
            if any(_uses_own_location(n) for n in body):
                for n in body:
                    violations += [f"{name}:{call.lineno}: writes near __file__" for call in _writes(n)]
    assert violations == []


def test_no_version_number_comparisons():
    """API differences are feature-tested (``"select" in bpy.types.PoseBone.bl_rna.properties``), never
    decided by ``bpy.app.version``: a version check breaks on the next release or a back-port."""
    violations = []
    for name, tree in parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and dotted(node) in (
                "bpy.app.version",
                "bpy.app.version_string",
                "bpy.app.version_file",
                "app.version",
            ):
                violations.append(f"{name}:{node.lineno}: {dotted(node)}")
    assert violations == []


@pytest.fixture(scope="module")
def manifest() -> dict:
    return tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))


def test_manifest_asks_for_no_permissions(manifest):
    """No [permissions]: the extension needs no network, files outside Blender, clipboard or camera."""
    assert "permissions" not in manifest


def test_manifest_identity_and_versions(manifest):
    """id, version 0.1.0, an add-on for Blender 4.2 and later, GPL-3.0-or-later, no wheels."""
    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == "two_bone_ik"
    assert manifest["version"] == "0.1.0"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert "blender_version_max" not in manifest
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert "wheels" not in manifest


def test_manifest_build_leaves_development_folders_out(manifest):
    """[build] paths_exclude_pattern names every development folder (tests/install checks the zip)."""
    patterns = set(manifest["build"]["paths_exclude_pattern"])
    for folder in sorted(DEV_FOLDERS):
        assert f"/{folder}/" in patterns
    assert {"__pycache__/", ".*", "/pyproject.toml", "/requirements*.txt"} <= patterns


# Built-in shaders named the same from 4.2 to 5.2 (C19); the 3D_/2D_ prefixed names are gone.
PORTABLE_SHADERS = {"UNIFORM_COLOR", "POLYLINE_UNIFORM_COLOR"}


def test_gpu_shaders_are_portable_and_built_in_draw_callbacks():
    """C19: only shader names valid on 4.2-5.2, no bgl, config passed by keyword; C18: gpu.shader
    is never called at module level (it raises SystemError in background mode)."""
    compat = next(tree for name, tree in parsed() if name.endswith("compat.py"))
    constants = {
        target.id: node.value.value
        for node in ast.walk(compat)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    problems, calls = [], 0
    for name, tree in parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
                problems += [f"{name}:{node.lineno}: imports bgl" for module in modules if module == "bgl"]
            if not (isinstance(node, ast.Call) and dotted(node.func).endswith("shader.from_builtin")):
                continue
            calls += 1
            if len(node.args) != 1 or (node.keywords and any(k.arg is None for k in node.keywords)):
                problems.append(f"{name}:{node.lineno}: from_builtin takes the name only, config by keyword")
            argument = node.args[0] if node.args else None
            value = (
                argument.value
                if isinstance(argument, ast.Constant)
                else constants.get(argument.id)
                if isinstance(argument, ast.Name)
                else None
            )
            if value not in PORTABLE_SHADERS:
                problems.append(
                    f"{name}:{node.lineno}: shader {value!r} is not one of {sorted(PORTABLE_SHADERS)}"
                )
        for node in tree.body:
            if any(
                isinstance(inner, ast.Call) and "gpu.shader" in dotted(inner.func) for inner in ast.walk(node)
            ) and not isinstance(node, ast.FunctionDef | ast.ClassDef):
                problems.append(f"{name}:{node.lineno}: gpu.shader called at module level")
    assert problems == []
    assert calls, "the overlay's from_builtin call was not found: the scan is broken"
    assert constants.get("WIDE_LINE_SHADER") in PORTABLE_SHADERS
