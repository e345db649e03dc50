# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistent handlers that run the driver on depsgraph updates, frame changes and file loads."""

from __future__ import annotations

from collections.abc import Callable

import bpy
from bpy.app.handlers import persistent

from . import mechanism, scope, upgrade
from .evaluate import evaluate_plan

# Object and armature updates are the only ones that can move a chain's inputs (transforms, poses,
# chain settings, bone data); any other update (a material, the world) solves nothing.
INPUT_TYPES = ("OBJECT", "ARMATURE")


def evaluate_scene(scene, depsgraph, relations_changed: bool = False, recount: bool = False) -> None:
    """Solve every chain in ``depsgraph``'s scene (scope.py: hidden objects, collection instances
    and background sets included), in dependency order, reading through ``depsgraph``.

    ``relations_changed``: the depsgraph rebuilt the scene's relations, so the cached plan is
    rebuilt too; ``recount``: check the cached plan against the scene's object count (scope.plan).
    Never raises: a handler that raises stops Blender's other handlers.
    """
    try:
        if depsgraph is None:
            depsgraph = bpy.context.evaluated_depsgraph_get()
        rendering = depsgraph.mode == "RENDER"
        if rendering and not bpy.app.background and not scene.render.use_lock_interface:
            # Writing while the interface draws a render can crash Blender (README, Known limits).
            return
        evaluate_plan(scope.plan(depsgraph, relations_changed, recount), depsgraph)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


@persistent
def two_bone_ik_depsgraph_update_post(scene, depsgraph=None) -> None:
    # Asking the depsgraph which ID types it updated costs the same whatever the scene's size;
    # walking depsgraph.updates would not.
    if depsgraph is not None and not any(depsgraph.id_type_updated(kind) for kind in INPUT_TYPES):
        return
    evaluate_scene(scene, depsgraph, depsgraph is not None and depsgraph.id_type_updated("SCENE"))


@persistent
def two_bone_ik_frame_change_post(scene, depsgraph=None) -> None:
    evaluate_scene(scene, depsgraph, recount=True)


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
        scope.invalidate()  # the references in the cached plans belong to the file just closed
        _upgrade_file()
        evaluate_scene(context.scene, context.evaluated_depsgraph_get(), relations_changed=True)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


@persistent
def two_bone_ik_undo_post(*_args) -> None:
    scope.invalidate()  # undo and redo replace the data the cached plans point at


def solve_open_file() -> None:
    """Solve the open file's scene now: enabling the extension on an open file fires no update.
    Does nothing when Blender gives no scene yet (the extension enabled at startup)."""
    context = bpy.context
    if getattr(context, "scene", None) is None or getattr(context, "view_layer", None) is None:
        return
    two_bone_ik_load_post()


# Each list passes its own arguments, which fake-bpy-module does not all describe (the handlers
# take optional or variable arguments): the lists are typed as holding any callable.
_HANDLERS: tuple[tuple[list[Callable[..., None]], Callable[..., None]], ...] = (
    (bpy.app.handlers.depsgraph_update_post, two_bone_ik_depsgraph_update_post),
    (bpy.app.handlers.frame_change_post, two_bone_ik_frame_change_post),
    (bpy.app.handlers.load_post, two_bone_ik_load_post),
    (bpy.app.handlers.undo_post, two_bone_ik_undo_post),
    (bpy.app.handlers.redo_post, two_bone_ik_undo_post),
)


def _ours(function, name: str) -> bool:
    # Match by name too: a reloaded module's old function object is still ours.
    return function is not None and getattr(function, "__name__", None) == name


def register() -> None:
    for handler_list, function in _HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function.__name__)]:
            handler_list.remove(existing)
        handler_list.append(function)
    scope.invalidate()
    solve_open_file()


def unregister() -> None:
    for handler_list, function in _HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function.__name__)]:
            handler_list.remove(existing)
    scope.invalidate()  # the cached plans hold references to the file's data
