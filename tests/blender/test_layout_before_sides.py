# SPDX-License-Identifier: GPL-3.0-or-later
"""Files made before the chain's side and the lower bone's own turn (up to 405f180; docs/design.md,
"The chain in Blender's pose tools"): they play as they were, and Update Mechanism upgrades them
with their keys: a right chain's Twist keys turned to the stored sign, the rolls keyed so the pose
stays on every keyed frame."""

from __future__ import annotations

import json
import pathlib
import shutil

import bpy
from blender_rig import package, update_mechanism
from mathutils import Vector

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
TOLERANCE = 1e-5  # m, on a leg of 1 m


def _miss(obj, wanted: dict) -> float:
    """The largest distance of a non-network bone's evaluated world head or tail from ``wanted``."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = evaluated.matrix_world
    return max(
        max(
            (world @ bone.head - Vector(points["head"])).length,
            (world @ bone.tail - Vector(points["tail"])).length,
        )
        for name, points in wanted.items()
        for bone in (evaluated.pose.bones[name],)
    )


def _fcurve(obj, path: str):
    fcurves = package().compat.animation_fcurves(obj)
    return next(fcurve for collection in fcurves[1:] for fcurve in collection if fcurve.data_path == path)


def test_a_file_made_before_sides_plays_as_before_and_update_mechanism_keeps_it(scene, tmp_path):
    """Two legs with chains (Add with Mirror), the right one's FK shin turned about its own axis and
    snapped (rolls keyed), its Twist keyed, the left one's Twist set and its shin turned: every frame
    plays as recorded; after Update Mechanism the right chain's Twist keys have the right side's sign,
    and every keyed frame still plays as recorded (the left leg, not keyed, on every frame)."""
    recorded = json.loads((DATA / "two_bone_ik_unsided.json").read_text())
    path = tmp_path / "two_bone_ik_unsided.blend"
    shutil.copy(DATA / "two_bone_ik_unsided.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj, scene = bpy.data.objects["Legs"], bpy.context.scene
    layout = package().network.layout
    names = package().network.naming.parts("thigh.R", "shin.R")
    assert not layout.reads_own_turn(obj, names) and layout.built_side(obj, names) == 1.0
    for frame, wanted in recorded["frames"].items():
        scene.frame_set(int(frame))
        assert _miss(obj, wanted) <= TOLERANCE, frame
        assert all(chain.state == "OK" for chain in obj.two_bone_ik.chains), frame
    scene.frame_set(1)
    update_mechanism(obj)
    assert layout.reads_own_turn(obj, names) and layout.built_side(obj, names) == -1.0
    twist = _fcurve(obj, 'pose.bones["shin.R"]["IK Twist"]')
    keys = {str(round(point.co.x)): round(point.co.y, 6) for point in twist.keyframe_points}
    assert keys == {frame: -value for frame, value in recorded["twist_keys"].items()}
    assert round(obj.pose.bones["shin.L"]["IK Twist"], 6) == recorded["left_twist"]  # a left chain's sign
    left = [name for name in recorded["frames"]["1"] if name.endswith(".L")]
    for frame, wanted in recorded["frames"].items():
        scene.frame_set(int(frame))
        assert all(chain.state == "OK" for chain in obj.two_bone_ik.chains), frame
        assert _miss(obj, {name: wanted[name] for name in left}) <= TOLERANCE, frame
        if int(frame) in recorded["keyed_frames"]:
            assert _miss(obj, wanted) <= TOLERANCE, frame
