# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs pytest with this folder's scripts kept off the import path, and exits with pytest's status.

The in-Blender tests import bpy in-process; the process exits normally on every supported Blender
(docs/blender-4.2-exit-crash.md), so a crash or hang at exit fails the command too.

Usage: python tools/pytest_run.py [pytest args]
"""

import pathlib
import sys

# This folder's scripts (build.py, validate.py, ...) must not shadow modules the tests import.
HERE = pathlib.Path(__file__).resolve().parent
sys.path = [entry for entry in sys.path if pathlib.Path(entry or ".").resolve() != HERE]

import pytest  # noqa: E402

if __name__ == "__main__":
    sys.exit(int(pytest.main(sys.argv[1:])))
