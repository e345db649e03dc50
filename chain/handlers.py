# SPDX-License-Identifier: GPL-3.0-or-later
"""The one handler left: on file load, chains saved by an earlier version get their network.

Blender evaluates the chains itself (network/build.py): nothing of ours runs per update, per frame
or per render.
"""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent

from ..network.edit import MechanismError
from . import upgrade


def upgrade_file() -> None:
    """Upgrade every local armature whose chains were saved by an earlier version (upgrade.py); one
    that cannot take its network keeps its chains, whose status says what to run."""
    for obj in bpy.data.objects:
        if obj.type != "ARMATURE" or obj.library is not None or obj.pose is None:
            continue
        try:
            upgraded = upgrade.upgrade(obj)
        except MechanismError as error:
            print(f"Two-Bone IK: '{obj.name}' keeps chains without a network: {error}")
            continue
        if upgraded:
            print(f"Two-Bone IK: built the network of chains {', '.join(upgraded)} of '{obj.name}'")


@persistent
def two_bone_ik_load_post(*_args) -> None:
    try:
        if bpy.context.scene is None or bpy.context.view_layer is None:
            return
        upgrade_file()
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


def _ours(function) -> bool:
    # Match by name too: a reloaded module's old function object is still ours.
    return getattr(function, "__name__", None) == two_bone_ik_load_post.__name__


def register() -> None:
    handlers = bpy.app.handlers.load_post
    for existing in [f for f in handlers if _ours(f)]:
        handlers.remove(existing)
    handlers.append(two_bone_ik_load_post)
    # Enabling the extension on an open file fires no load: upgrade it now (no scene yet at start-up).
    if (
        getattr(bpy.context, "scene", None) is not None
        and getattr(bpy.context, "view_layer", None) is not None
    ):
        try:
            upgrade_file()
        except Exception as error:  # an enable must not fail on one file's rig
            print(f"Two-Bone IK: {error!r}")


def unregister() -> None:
    handlers = bpy.app.handlers.load_post
    for existing in [f for f in handlers if _ours(f)]:
        handlers.remove(existing)
