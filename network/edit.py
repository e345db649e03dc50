# SPDX-License-Identifier: GPL-3.0-or-later
"""Edit Mode for the network's bones: whether an armature can take them, and a session to add or
remove them in."""

from __future__ import annotations

import contextlib
from typing import Literal

import bpy


class MechanismError(ValueError):
    """The network cannot be built on this armature; the message says why and what to do."""


def can_add_bones(obj) -> str:
    """Why network bones cannot be added to ``obj``'s armature ('' when they can)."""
    if obj.library is not None:
        return f"'{obj.name}' is linked from a library: make a library override first"
    data = obj.data
    if data.library is not None or data.override_library is not None:
        return (
            f"The bones of '{obj.name}' come from a library, and an override cannot add bones: "
            "add the chain in the library file, where the rig is built"
        )
    return ""


def bone_collection(armature, name: str, visible: bool):
    """Bone collection ``name`` of ``armature``, made when missing, shown or hidden as ``visible``
    says when made (a rigger's later choice is kept)."""
    collection = armature.collections_all.get(name)
    if collection is None:
        collection = armature.collections.new(name)
        collection.is_visible = visible
    return collection


@contextlib.contextmanager
def edit_bones(obj):
    """Switch ``obj`` to Edit Mode, yield its edit bones, then go back to the mode it was in.

    Raises MechanismError (naming the armature) when Blender refuses Edit Mode (the armature is
    in Edit Mode already, hidden, or not in the view layer), before anything is changed.
    """
    if obj.mode == "EDIT":
        raise MechanismError(f"'{obj.name}' is in Edit Mode: leave it to build the chain's mechanism")
    with in_mode(obj, "EDIT"):
        yield obj.data.edit_bones


@contextlib.contextmanager
def in_mode(obj, mode: Literal["EDIT", "POSE"]):
    """Switch ``obj`` to ``mode`` ("EDIT", "POSE"), then back to the mode it was in. Raises
    MechanismError (naming the armature) when Blender refuses the switch."""
    context = bpy.context
    before = obj.mode
    view_layer = context.view_layer
    active = view_layer.objects.active
    try:
        view_layer.objects.active = obj
        with context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            bpy.ops.object.mode_set(mode=mode)
    except (RuntimeError, TypeError) as error:
        view_layer.objects.active = active
        what = "edit its bones" if mode == "EDIT" else "change its constraints"
        raise MechanismError(f"'{obj.name}' cannot enter {mode.title()} Mode to {what}: {error}") from None
    try:
        yield
    finally:
        with context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            bpy.ops.object.mode_set(mode=before)
        view_layer.objects.active = active
