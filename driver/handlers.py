# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistent handlers that run the driver on depsgraph updates, frame changes and file loads."""

from __future__ import annotations

from collections.abc import Callable

import bpy
from bpy.app.handlers import persistent

from . import mechanism, upgrade
from .evaluate import evaluate_armature


def evaluate_scene(scene, depsgraph, updated: set[int] | None = None) -> None:
    """Solve every chain of every armature in ``scene``, reading through ``depsgraph``.

    ``updated``: session_uids of the IDs this evaluation updated; when given, only chains whose
    armature, target or pole is among them are solved (the others' inputs did not change).

    Linked armatures (not overridden) are skipped: their data belongs to the library, so the
    driver writes nothing to them (case C14). So are armatures in Edit Mode: their bones are being
    edited and ``data.bones`` is stale until Edit Mode ends. Never raises: a handler that raises
    stops Blender's other handlers.
    """
    try:
        if depsgraph is None:
            depsgraph = bpy.context.evaluated_depsgraph_get()
        rendering = depsgraph.mode == "RENDER"
        if rendering and not bpy.app.background and not scene.render.use_lock_interface:
            # Writing while the interface draws a render can crash Blender (BLENDER-NOTES).
            return
        for obj in scene.objects:
            if (
                obj.type == "ARMATURE"
                and obj.library is None
                and not obj.data.is_editmode
                and obj.pose is not None
                and len(obj.two_bone_ik.chains)
            ):
                evaluate_armature(obj, depsgraph, updated)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


@persistent
def two_bone_ik_depsgraph_update_post(scene, depsgraph=None) -> None:
    # The updates include everything re-evaluated through relations (children, constraint users),
    # so a chain none of whose objects is listed has the inputs it had last time.
    updated = None
    if depsgraph is not None:
        try:
            updated = {update.id.original.session_uid for update in depsgraph.updates}
        except Exception:  # solve everything rather than miss an update
            updated = None
    evaluate_scene(scene, depsgraph, updated)


@persistent
def two_bone_ik_frame_change_post(scene, depsgraph=None) -> None:
    evaluate_scene(scene, depsgraph)


def _upgrade_file() -> None:
    """Upgrade every local armature whose chains were saved by 0.1.0 (upgrade.py); one that cannot
    take its mechanism keeps its chains, whose status says what to run."""
    for obj in bpy.data.objects:
        if obj.type != "ARMATURE" or obj.library is not None or obj.pose is None:
            continue
        try:
            upgraded = upgrade.upgrade(obj)
        except mechanism.MechanismError as error:
            print(f"Two-Bone IK: '{obj.name}' keeps 0.1.0 chains without a mechanism: {error}")
            continue
        if upgraded:
            print(f"Two-Bone IK: upgraded the 0.1.0 chains {', '.join(upgraded)} of '{obj.name}'")


@persistent
def two_bone_ik_load_post(*_args) -> None:
    """Upgrade chains saved by 0.1.0, then solve the opened file's scene once.

    Loading fires no depsgraph update, so a file whose pose is stale (saved with the extension
    disabled, or a library that changed since) would otherwise show that pose until the next edit.
    """
    try:
        context = bpy.context
        if context.scene is None or context.view_layer is None:
            return
        _upgrade_file()
        evaluate_scene(context.scene, context.evaluated_depsgraph_get())
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


# Each list passes its own arguments, which fake-bpy-module does not all describe (the handlers
# take optional or variable arguments): the lists are typed as holding any callable.
_HANDLERS: tuple[tuple[list[Callable[..., None]], Callable[..., None]], ...] = (
    (bpy.app.handlers.depsgraph_update_post, two_bone_ik_depsgraph_update_post),
    (bpy.app.handlers.frame_change_post, two_bone_ik_frame_change_post),
    (bpy.app.handlers.load_post, two_bone_ik_load_post),
)


def _ours(function, name: str) -> bool:
    # Match by name too: a reloaded module's old function object is still ours.
    return function is not None and getattr(function, "__name__", None) == name


def register() -> None:
    for handler_list, function in _HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function.__name__)]:
            handler_list.remove(existing)
        handler_list.append(function)


def unregister() -> None:
    for handler_list, function in _HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function.__name__)]:
            handler_list.remove(existing)
