# SPDX-License-Identifier: GPL-3.0-or-later
"""One name per module, and small modules, checked on the shipped source (no Blender needed).

- No facade: a module imports only names it uses itself, so each name is read from the module
  that defines it (a package's ``__init__.py`` may offer the names of its ``__all__``, the
  package's public face). A ``noqa`` does not hide an import here.
- No module goes by another's name: ``from ..network import build as network`` would make one
  module read as another (or as a whole package) to every reader of the importing file.
- No shipped module is over :data:`MAX_LINES` lines: past that a module holds several jobs.
"""

import ast
import pathlib

from shipped import REPO, extension_files, parsed

MAX_LINES = 450


def _is_package_face(name: str) -> bool:
    return pathlib.PurePosixPath(name).name == "__init__.py"


def _all_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            names |= {element.value for element in node.value.elts}  # type: ignore[attr-defined]
    return names


def passed_on(name: str, tree: ast.Module) -> list[str]:
    """Names ``tree`` imports from the extension's own modules but never reads itself: there for
    other modules to import through it (a package's ``__all__`` aside)."""
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    offered = _all_names(tree) if _is_package_face(name) else set()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        for alias in node.names:
            bound = alias.asname or alias.name
            if bound not in read and bound not in offered:
                found.append(f"{name}:{node.lineno} passes on {bound}")
    return found


def module_names(files: list[str]) -> set[str]:
    """The names of the extension's modules and packages ('build', 'network', ...)."""
    names = set()
    for name in files:
        path = pathlib.PurePosixPath(name)
        names |= set(path.parts[:-1])
        if path.name != "__init__.py":
            names.add(path.stem)
    return names


def _imported_module(name: str, node: ast.ImportFrom, alias: ast.alias, files: set[str]) -> str:
    """The path of the module ``alias`` of the relative import ``node`` in ``name`` imports ('' when
    it imports a name from a module, not a module)."""
    folder = pathlib.PurePosixPath(name).parent
    for _ in range(node.level - 1):
        folder = folder.parent
    base = folder.joinpath(*(node.module or "").split(".")) if node.module else folder
    module = base / alias.name
    for candidate in (f"{module}.py", f"{module}/__init__.py"):
        if candidate.removeprefix("./") in files:
            return candidate.removeprefix("./")
    return ""


def disguised(name: str, tree: ast.Module, files: set[str]) -> list[str]:
    """Imports in ``name`` that give one of the extension's modules the name of another module or
    package of the extension (``from ..network import build as network``)."""
    others = module_names(sorted(files))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        for alias in node.names:
            if alias.asname is None or alias.asname == alias.name:
                continue
            module = _imported_module(name, node, alias, files)
            if module and alias.asname in others:
                found.append(f"{name}:{node.lineno} imports {module} as {alias.asname}")
    return found


def _shipped_names() -> set[str]:
    return {path.relative_to(REPO).as_posix() for path in extension_files()}


def test_no_module_passes_on_another_modules_names():
    """Each name is imported from the module that defines it: no module re-exports another's."""
    assert [found for name, tree in parsed() for found in passed_on(name, tree)] == []


def test_no_module_goes_by_another_modules_name():
    files = _shipped_names()
    assert [found for name, tree in parsed() for found in disguised(name, tree, files)] == []


def long_modules(files) -> list[str]:
    """Shipped modules longer than MAX_LINES, with their length."""
    lengths = ((path, len(path.read_text(encoding="utf-8").splitlines())) for path in files)
    return [f"{path.relative_to(REPO).as_posix()}: {lines}" for path, lines in lengths if lines > MAX_LINES]


def test_no_shipped_module_is_over_the_size_limit():
    assert long_modules(extension_files()) == []
