# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs pytest and leaves the process with pytest's exit code, skipping C++ static destructors.

The in-Blender tests import bpy in-process. After a render, the bpy 4.5 module hangs for ever at
process exit (a static destructor waits on its GPU worker threads: measured with bpy 4.5.15), and
4.2 can crash there. Pytest has finished and reported by then, so the process ends with
``os._exit(code)`` once its output is flushed; a failing test still fails the command.

Usage: python tools/pytest_run.py [pytest args]
"""

import os
import pathlib
import sys

# This folder's scripts (build.py, validate.py, ...) must not shadow modules the tests import.
HERE = pathlib.Path(__file__).resolve().parent
sys.path = [entry for entry in sys.path if pathlib.Path(entry or ".").resolve() != HERE]

import pytest  # noqa: E402

if __name__ == "__main__":
    code = int(pytest.main(sys.argv[1:]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
