# SPDX-License-Identifier: GPL-3.0-or-later
"""The files that ship with the extension, parsed: what the static rules read (no bpy)."""

import ast
import importlib.util
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
# Root folders that are for development and never ship (see [build] in blender_manifest.toml).
DEV_FOLDERS = {"tests", "tools", "bench", "demo", "docs", "out", "dist", "build", "requirements"}


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


def parsed() -> list[tuple[str, ast.Module]]:
    """(path from the repository root, parsed module) of each shipped file."""
    return [
        (path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in extension_files()
    ]


def network_spec():
    """network/spec.py, loaded alone (it is data: no bpy, no package)."""
    found = importlib.util.spec_from_file_location("network_spec", REPO / "network" / "spec.py")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module
