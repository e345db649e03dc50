# SPDX-License-Identifier: GPL-3.0-or-later
"""Packaging tests: the zip Blender's own tooling builds from this checkout, and installing it.

These tests never import the extension in-process: they read the zip, or run Blender in a
subprocess. The zip is TWO_BONE_IK_ZIP when set (CI builds it once with tools/build.py and tests
that file on every Blender version), else one built here with the running bpy's blender_ext.py.
"""

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory) -> pathlib.Path:
    """Path of the built extension zip."""
    given = os.environ.get("TWO_BONE_IK_ZIP")
    if given:
        path = pathlib.Path(given).resolve()
        assert path.is_file(), f"TWO_BONE_IK_ZIP={given} does not exist"
        return path
    output = tmp_path_factory.mktemp("dist")
    completed = subprocess.run(
        [sys.executable, str(REPO / "tools" / "build.py"), "--output-dir", str(output)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, f"tools/build.py failed:\n{completed.stdout}{completed.stderr}"
    return pathlib.Path(completed.stdout.strip().splitlines()[-1])
