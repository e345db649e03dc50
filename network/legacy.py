# SPDX-License-Identifier: GPL-3.0-or-later
"""Networks of the earlier layout kept the chain's settings on their root bone and its rolls in their
solved bones' channels, hidden from the animation editors. They play as built; a rebuild (Update
Mechanism) moves what the animator keyed to the lower bone's properties (docs/design.md, "Where a
chain's keys live"):

- keys and drivers on the settings: the same F-Curves under the new data path, in every action
  (values and interpolation unchanged: the same curve);
- keys on the rolls: a key on each property at each frame an old roll channel was keyed, set so
  the solved bones take the orientations the old network gave them there (the two layouts turn
  the lower bone's start differently, so the angles are measured, not copied).

Networks built before the chain's side and the lower bone's own turn (docs/design.md, "The chain
in Blender's pose tools") read Twist and the rolls as stored and drop the lower bone's own turn
about its axis. They play as built; a rebuild stores a right-side chain's twist (its keys too)
with the other sign, and where the lower bone is turned about its axis (or a roll is keyed), keys
the rolls so that the solved bones take the orientations the old network gave them on each frame
its rolls, twist or the lower bone's rotation are keyed.
"""

from __future__ import annotations

import math

import bpy
from mathutils import Matrix

from ..compat import animation_fcurves
from . import rolls
from .layout import (
    PROPERTIES,
    SETTINGS,
    bone_path,
    legacy_setting_path,
    reads_own_turn,
    setting_path,
)
from .naming import Parts, chain_lower, side


def _actions_fcurves(obj) -> list:
    """Every F-Curve collection that may hold ``obj``'s keys: its drivers, its action's and NLA
    strips' (:func:`animation_fcurves`), and those of every other action in the file with a slot
    for objects (clips the armature plays at other times)."""
    found = animation_fcurves(obj)
    seen = {id(collection) for collection in found}
    for action in bpy.data.actions:
        for collection in _fcurve_lists(action):
            if id(collection) not in seen:
                found.append(collection)
    return found


def _fcurve_lists(action) -> list:
    """The F-Curve collections of ``action``: each channelbag's (4.4+), or ``action.fcurves``."""
    if hasattr(action, "layers") and len(action.layers):
        return [bag.fcurves for layer in action.layers for strip in layer.strips for bag in strip.channelbags]
    return [action.fcurves] if hasattr(action, "fcurves") else []


def move_settings(obj, chain, names: Parts) -> list[str]:
    """Rename the F-Curves of the chain's settings from the root bone to the lower bone, in every
    action; returns what moved, in words."""
    moved = {
        legacy_setting_path(names.root, name): setting_path(chain.lower_bone, name) for name, *_ in SETTINGS
    }
    said = []
    for fcurves in _actions_fcurves(obj):
        for fcurve in fcurves:
            new = moved.get(fcurve.data_path)
            if new is not None and fcurves.find(new) is None:
                fcurve.data_path = new
                said.append(new.rsplit("[", 1)[-1][1:-2])
    return said


def roll_frames(obj, names: Parts) -> list[float]:
    """The frames at which the chain's old rolls or settings are keyed in ``obj``'s action: where
    the rolls get keys, so the pose is the old one on every frame the animator keyed."""
    paths = set(rolls.legacy_paths(names)) | {legacy_setting_path(names.root, name) for name, *_ in SETTINGS}
    return _keyed_frames(obj, paths)


def _keyed_frames(obj, paths: set[str]) -> list[float]:
    """The frames of the keys on any of ``paths`` in ``obj``'s action."""
    animation = obj.animation_data
    if animation is None or animation.action is None:
        return []
    frames: set[float] = set()
    for fcurves in animation_fcurves(obj)[1:2]:  # the action's own (not the drivers, not NLA)
        for fcurve in fcurves:
            if fcurve.data_path in paths:
                frames.update(point.co.x for point in fcurve.keyframe_points)
    return sorted(frames)


_ROTATIONS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")


def needs_turn_upgrade(obj, chain, names: Parts) -> bool:
    """Whether the chain's network was built before sides and the lower bone's own turn, and a
    rebuild changes what it shows unless the rolls are measured again: a right-side chain, a lower
    bone turned about its axis now (above 1e-6 rad), or keys on its rotation or the rolls."""
    lower = obj.pose.bones.get(chain.lower_bone)
    if lower is None or obj.pose.bones.get(names.root) is None or reads_own_turn(obj, names):
        return False
    if side(chain.lower_bone) < 0.0 or turn_frames(obj, chain, names):
        return True
    rotation = lower.matrix_basis.to_quaternion()
    return abs(math.atan2(rotation.y, rotation.w)) > 5e-7


def turn_frames(obj, chain, names: Parts) -> list[float]:
    """The frames at which the chain's rolls or twist, or its lower bone's rotation, are keyed in
    ``obj``'s action (:func:`roll_frames`' rule for a network of the layout before sides)."""
    paths = {setting_path(chain.lower_bone, name) for name in ("upper_roll", "lower_roll", "twist")}
    paths |= {f"{bone_path(chain.lower_bone)}.{channel}" for channel in _ROTATIONS}
    return _keyed_frames(obj, paths)


def turn_twist_keys(obj, lower: str) -> None:
    """Turn the sign of the keys of the twist of the chain on ``lower`` in every action (its value
    was turned by the rebuild: the twist of a right-side chain is stored with the other sign)."""
    path = setting_path(lower, "twist")
    drivers = obj.animation_data.drivers if obj.animation_data is not None else None
    turned = set()  # an action's channelbag is listed both as the armature's and among all actions
    for fcurves in _actions_fcurves(obj):
        for fcurve in fcurves if fcurves != drivers else ():
            if fcurve.data_path != path or fcurve.as_pointer() in turned:
                continue
            turned.add(fcurve.as_pointer())
            for point in fcurve.keyframe_points:
                for attribute in ("co", "handle_left", "handle_right"):
                    value = getattr(point, attribute)
                    value[1] = -value[1]
            fcurve.update()


def solved_poses(context, obj, names: Parts, frames: list[float]) -> list[tuple[Matrix, Matrix]]:
    """The evaluated armature-space matrices of the old network's solved bones at the current frame
    (first) and at each of ``frames``; the scene's frame is set back."""
    scene = context.scene
    now = scene.frame_current, scene.frame_subframe
    poses = []
    for frame in [None, *frames]:
        if frame is not None:
            scene.frame_set(int(frame), subframe=frame - int(frame))
        bones = obj.evaluated_get(context.evaluated_depsgraph_get()).pose.bones
        poses.append((bones[names.upper].matrix.copy(), bones[names.lower].matrix.copy()))
    if frames:
        scene.frame_set(now[0], subframe=now[1])
    return poses


def remove_roll_channels(obj, names: Parts) -> None:
    """Remove the old roll channels' F-Curves (all actions) and set the solved bones' channels to
    rest (they hold no roll now)."""
    paths = set(rolls.legacy_paths(names))
    for fcurves in _actions_fcurves(obj):
        for fcurve in [f for f in fcurves if f.data_path in paths]:
            fcurves.remove(fcurve)


def key_rolls(context, obj, names: Parts, frames: list[float], poses) -> int:
    """Match the rolls to the old network's ``poses`` (:func:`solved_poses`): at the current frame,
    and with a key on each roll property at each of ``frames``; the scene's frame is set back.
    Returns the number of frames keyed."""
    scene = context.scene
    now = scene.frame_current, scene.frame_subframe
    holder = obj.pose.bones[chain_lower(names)]
    group = holder.name
    for frame, pose in zip(frames, poses[1:], strict=True):
        scene.frame_set(int(frame), subframe=frame - int(frame))
        rolls.match(context, obj, names, *pose)
        for name in ("upper_roll", "lower_roll"):
            holder.keyframe_insert(f'["{PROPERTIES[name]}"]', frame=frame, group=group)
    if frames:
        scene.frame_set(now[0], subframe=now[1])
    rolls.match(context, obj, names, *poses[0])
    return len(frames)
