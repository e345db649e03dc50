# SPDX-License-Identifier: GPL-3.0-or-later
"""Differences between the supported Blender versions (4.2 to 5.3), in one place.

Every difference is decided by testing for the feature, never by comparing ``bpy.app.version``: a
version check breaks on the next release and on back-ports. The one exception is a defect of one
release that no feature test shows without making data (``BOOLEAN_KEYS_STEP``). Each helper says
which versions take which branch, as measured with the PyPI bpy modules of the compatibility
matrix (tools/matrix.sh).

- Bone selection: ``PoseBone.select`` from 5.0, ``Bone.select`` before.
- Animation: slotted (layered) actions from 4.4, where F-Curves live in the channelbag of the slot
  bound to the animated ID; ``Action.fcurves`` on 4.2 and 4.3, removed in 5.0.
- Keyed booleans: 4.4 gives their keys Bezier interpolation and their F-Curves no discrete flag, so
  they do not step (chain/enabled_keys.py); every other supported version steps them.
- gpu: ``POLYLINE_UNIFORM_COLOR`` is a line shader named the same on every supported version;
  shaders can only be built in a draw callback.
- UI lists: ``template_list(type="GRID")`` raises TypeError on 5.0; DEFAULT draws everywhere.
"""

from __future__ import annotations

from typing import Final

import bpy
from bpy_extras import anim_utils

# Bone selection lives on PoseBone from Blender 5.0 and on Bone before.
POSE_BONE_SELECT: bool = "select" in bpy.types.PoseBone.bl_rna.properties

# Slotted actions (4.4+): anim_utils has the channelbag helpers; Action.fcurves may be gone (5.0+).
LAYERED_ACTIONS: bool = hasattr(anim_utils, "action_get_channelbag_for_slot")

# Whether Blender plays a keyed boolean as steps whatever its keys' interpolation. Blender 4.4.0 (the
# only 4.4 of the PyPI bpy module) makes a boolean's F-Curve without the discrete flag and keys it
# Bezier: between an on and an off key the property reads off (measured, tools/matrix.sh).
BOOLEAN_KEYS_STEP: bool = bpy.app.version[:2] != (4, 4)  # noqa: TID251 (see above)

# A built-in shader name valid on every supported version (the 3D_/2D_ prefixed ones are gone).
WIDE_LINE_SHADER = "POLYLINE_UNIFORM_COLOR"

# The template_list layout that draws on every supported version.
UI_LIST_TYPE: Final = "DEFAULT"


def bone_selection_owner(obj, bone_name: str):
    """The struct whose ``select`` is the selection of bone ``bone_name`` of armature object ``obj``:
    its pose bone on 5.0+, its bone (``obj.data.bones``) on 4.x.

    Raises
    ------
    KeyError
        When the armature has no bone of that name.
    """
    return obj.pose.bones[bone_name] if POSE_BONE_SELECT else obj.data.bones[bone_name]


def select_bone(obj, bone_name: str, selected: bool = True) -> None:
    """Select (or deselect) bone ``bone_name`` of armature object ``obj``, on every supported version."""
    bone_selection_owner(obj, bone_name).select = selected


def _ensure_channelbag(action, slot):
    ensure = getattr(anim_utils, "action_ensure_channelbag_for_slot", None)
    if ensure is not None:  # 4.5+
        return ensure(action, slot)
    # 4.4 has channelbags but not this helper yet.
    layer = action.layers[0] if len(action.layers) else action.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    return strip.channelbag(slot, ensure=True)


def action_fcurves(id_data, create: bool = False):
    """The F-Curves that animate ``id_data`` (an Object, usually): the collection to ``find`` and
    ``new`` F-Curves in.

    On 4.4+ that is the channelbag of the action slot bound to ``id_data``; on 4.2-4.3 it is
    ``action.fcurves``. With ``create``, makes what is missing: the animation data, an action named
    "<name>Action" and, on 4.4+, a slot of its own bound to ``animation_data.action_slot`` (an action
    that already animates other data gets a new slot, so nothing of the other ID is touched; an
    unbound slot plays nothing). Without ``create``, returns None when any of these is missing.
    """
    animation_data = id_data.animation_data
    if animation_data is None:
        if not create:
            return None
        animation_data = id_data.animation_data_create()
    action = animation_data.action
    if action is None:
        if not create:
            return None
        action = bpy.data.actions.new(f"{id_data.name}Action")
        animation_data.action = action
    if not LAYERED_ACTIONS:
        return action.fcurves
    slot = animation_data.action_slot
    if slot is None:
        if not create:
            return None
        slot = action.slots.new(id_type=id_data.id_type, name=id_data.name)
        animation_data.action_slot = slot
    if create:
        return _ensure_channelbag(action, slot).fcurves
    return _slot_fcurves(action, slot)


def _slot_fcurves(action, slot):
    """The F-Curves of ``action`` that ``slot`` plays (4.4+: its channelbag; None when it has none)."""
    channelbag = anim_utils.action_get_channelbag_for_slot(action, slot)
    return None if channelbag is None else channelbag.fcurves


def animation_fcurves(id_data) -> list:
    """Every F-Curve collection that animates ``id_data``: its drivers, its action's and each NLA
    strip's (on 4.4+ the channelbag of the slot bound to it, on 4.2-4.3 ``action.fcurves``)."""
    animation_data = id_data.animation_data
    if animation_data is None:
        return []
    found = [animation_data.drivers]
    users = [animation_data] + [strip for track in animation_data.nla_tracks for strip in track.strips]
    for user in users:
        action = user.action
        if action is None:
            continue
        if not LAYERED_ACTIONS:
            found.append(action.fcurves)
        elif (
            user.action_slot is not None and (fcurves := _slot_fcurves(action, user.action_slot)) is not None
        ):
            found.append(fcurves)
    return found


def new_fcurve(fcurves, data_path: str, index: int = 0, group: str = ""):
    """Find or make the F-Curve for ``data_path[index]`` in ``fcurves`` (from :func:`action_fcurves`),
    in channel group ``group`` where the version supports groups on new F-Curves.

    4.2-4.3 take ``action_group``; 5.0+ channelbags take ``group_name``; 4.4-4.5 channelbags take
    neither (the F-Curve is made ungrouped there).
    """
    fcurve = fcurves.find(data_path, index=index)
    if fcurve is not None:
        return fcurve
    if not group:
        return fcurves.new(data_path, index=index)
    if not LAYERED_ACTIONS:
        return fcurves.new(data_path, index=index, action_group=group)
    try:
        return fcurves.new(data_path, index=index, group_name=group)
    except TypeError:
        return fcurves.new(data_path, index=index)


def autokey(context, struct, paths) -> None:
    """Auto Keying, as Blender's own tools do it: key ``struct``'s (object or pose bone)
    "location" and/or "rotation" at the current frame, when Auto Keying is on.

    5.0+ goes through ``bpy_extras.anim_utils.AutoKeying`` (as Copy Global Transform does), which
    honours Only Insert Needed, Visual Keying and the key type. Earlier versions, and Only Active
    Keying Set with a keying set active (which AutoKeying refuses without a window), key the
    channels of the struct's rotation mode directly.
    """
    settings = context.scene.tool_settings
    if not settings.use_keyframe_insert_auto:
        return
    autokeying = getattr(anim_utils, "AutoKeying", None)
    keying_set = settings.use_keyframe_insert_keyingset and context.scene.keying_sets_all.active
    if autokeying is not None and not keying_set:
        # options() resets the key type to '' unless given one, which keyframe_insert refuses.
        wanted = {"use_loc": "location" in paths, "use_rot": "rotation" in paths, "use_scale": False}
        with autokeying.options(keytype=settings.keyframe_type, **wanted):
            autokeying.key_transformation(struct, autokeying.autokeying_options(context))
        return
    group = struct.name if isinstance(struct, bpy.types.PoseBone) else ""
    for path in paths:
        if path == "rotation":
            mode = struct.rotation_mode
            path = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
                mode, "rotation_euler"
            )
        struct.keyframe_insert(path, group=group)
