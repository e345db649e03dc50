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
"""

from __future__ import annotations

import bpy
from mathutils import Matrix

from ..compat import animation_fcurves
from . import rolls
from .layout import PROPERTIES, SETTINGS, Parts, chain_lower, legacy_setting_path, setting_path


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
    animation = obj.animation_data
    if animation is None or animation.action is None:
        return []
    frames: set[float] = set()
    for fcurves in animation_fcurves(obj)[1:2]:  # the action's own (not the drivers, not NLA)
        for fcurve in fcurves:
            if fcurve.data_path in paths:
                frames.update(point.co.x for point in fcurve.keyframe_points)
    return sorted(frames)


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
