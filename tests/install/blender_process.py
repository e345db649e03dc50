# SPDX-License-Identifier: GPL-3.0-or-later
"""How a Blender session run by the packaging tests must end."""

import functools


@functools.cache
def exited_cleanly(returncode: int) -> bool:
    """Whether a Blender session ended as it should: status 0 on every supported version (a crash
    or hang at exit fails; docs/blender-4.2-exit-crash.md)."""
    return returncode == 0
