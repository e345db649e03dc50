# SPDX-License-Identifier: GPL-3.0-or-later
"""The headless command ``blender --command two_bone_ik ...``: bake and report without the interface."""

import bpy

from .commands import COMMAND, execute, run

__all__ = ("COMMAND", "execute", "register", "run", "unregister")

_handle = None


def register() -> None:
    """Register the command once. A second registration of one id makes Blender disable both, so
    an earlier registration of ours (a reload) is removed first."""
    global _handle
    unregister()
    _handle = bpy.utils.register_cli_command(COMMAND, run)


def unregister() -> None:
    """Unregister the command; does nothing when it is not registered."""
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None


def is_registered() -> bool:
    """Whether this module holds a registration of the command."""
    return _handle is not None
