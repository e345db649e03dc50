# SPDX-License-Identifier: GPL-3.0-or-later
"""The handlers: on file load, chains saved by an earlier version get their network; on Blender 4.4
alone, keys on a chain's Enabled are made constant when they appear (chain/enabled_keys.py).

Blender evaluates the chains itself (network/build.py): on every other version nothing of ours runs
per update, per frame or per render.
"""

from __future__ import annotations

from collections.abc import Callable

import bpy
from bpy.app.handlers import persistent

from ..compat import BOOLEAN_KEYS_STEP
from ..network.edit import MechanismError
from . import enabled_keys, memo, upgrade


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
        if not BOOLEAN_KEYS_STEP:
            enabled_keys.step_all(bpy.data.objects)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


@persistent
def two_bone_ik_step_enabled_keys(scene, depsgraph=None) -> None:
    """Blender 4.4: before each frame (keys made from Python, playback, renders) and after each
    update that changed an action (keys made in the UI or by a keying set)."""
    try:
        if depsgraph is not None and not any(isinstance(u.id, bpy.types.Action) for u in depsgraph.updates):
            return
        enabled_keys.step_all(scene.objects)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


def _lists() -> list[tuple[list, Callable]]:
    """(handler list, our function) pairs: what this module registers on this Blender."""
    lists: list[tuple[list, Callable]] = [(bpy.app.handlers.load_post, two_bone_ik_load_post)]
    if not BOOLEAN_KEYS_STEP:
        lists.append((bpy.app.handlers.frame_change_pre, two_bone_ik_step_enabled_keys))
        lists.append((bpy.app.handlers.depsgraph_update_post, two_bone_ik_step_enabled_keys))
    return lists


def _remove_ours() -> None:
    # Match by name too: a reloaded module's old function object is still ours.
    for handlers, function in _lists():
        for existing in [f for f in handlers if getattr(f, "__name__", None) == function.__name__]:
            handlers.remove(existing)


def register() -> None:
    _remove_ours()
    for handlers, function in _lists():
        handlers.append(function)
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
    _remove_ours()
    memo.forget()  # the interface's kept readouts and the handlers that watch them
