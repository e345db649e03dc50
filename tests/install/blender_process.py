# SPDX-License-Identifier: GPL-3.0-or-later
"""How a Blender session run by the packaging tests must end."""

import functools
import subprocess
import sys


@functools.cache
def bpy_version() -> tuple[int, ...]:
    """The version of the bpy module these tests run on (read in a subprocess: nothing Blender is
    imported in this one)."""
    completed = subprocess.run(
        [sys.executable, "-c", "import bpy; print(*bpy.app.version)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(int(part) for part in completed.stdout.split()[-3:])


def exited_cleanly(returncode: int) -> bool:
    """Whether a Blender session ended as it should: status 0. The bpy 4.2 module alone crashes
    while exiting (SIGSEGV) once any property with a Python callback was registered
    (docs/blender-4.2-exit-crash.md); on every later version a crash fails."""
    return returncode == 0 or (bpy_version() < (4, 5, 0) and returncode in (-11, 139))
