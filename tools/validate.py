# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs Blender's own extension validator (blender_ext.py, shipped in the bpy wheel) on the repo."""

import importlib.util
import pathlib
import subprocess
import sys


def blender_ext_cli() -> pathlib.Path:
    """Path of blender_ext.py inside the installed bpy package (found without importing bpy)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the bpy package is not installed (run: bash tools/test.sh)")
    package = pathlib.Path(next(iter(spec.submodule_search_locations)))
    matches = sorted(package.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not matches:
        sys.exit(f"blender_ext.py not found under {package}")
    return matches[0]


if __name__ == "__main__":
    repo = pathlib.Path(__file__).resolve().parent.parent
    sys.exit(subprocess.call([sys.executable, str(blender_ext_cli()), "validate", str(repo)]))
