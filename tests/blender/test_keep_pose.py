# SPDX-License-Identifier: GPL-3.0-or-later
"""Turning a chain on right after Add, or right after Snap IK to FK, moves no bone (docs/contract.md,
"Bone orientation"): an FK pose whose knee bends off the rest bend plane keeps every bone's world
orientation (the chain's rolls turn the solved bones about their own axes) as well as its joints,
for rolled bones and a mirrored pair. Snap FK to IK and the played, keyed rolls keep matching."""

from __future__ import annotations

import math

import bpy
import pytest
from blender_rig import add_chain_with_operator, fcurves, leg_bones, make_armature, set_mode
from mathutils import Matrix, Vector

ANGLE = 1e-4  # rad
POSITION = 1e-5  # m
# Points 5 cm off each bone, on its X and Z axes: a skin point follows them.
OFFSETS = (Vector((0.05, 0.0, 0.0)), Vector((0.0, 0.3, 0.05)))
# FK poses (thigh Euler, shin Euler) whose knee bends off the rest bend plane: the shin turned
# about its own Z, a twisted and bent thigh, a shin turned about all three axes.
POSES = [
    ((0.2, 0.1, 0.3), (0.0, 0.0, 0.6)),
    ((-0.4, 0.6, -0.2), (0.5, 0.0, -0.4)),
    ((0.9, -0.3, 1.1), (0.3, 0.8, 0.25)),
]


FOOT_TAIL = (0, -0.15, 0)  # the bent leg's foot (blender_rig.leg_bones), from the ankle at the origin


def _rig(roll: float):
    """Armature "Leg": the bent leg with a foot, every bone rolled by ``roll`` (radians)."""
    return make_armature("Leg", leg_bones(foot_tail=FOOT_TAIL), roll=roll)


def _pose(obj, thigh, shin, suffix: str = "") -> None:
    for name, euler in ((f"thigh{suffix}", thigh), (f"shin{suffix}", shin)):
        pose_bone = obj.pose.bones[name]
        pose_bone.rotation_mode = "XYZ"
        pose_bone.rotation_euler = euler
    bpy.context.view_layer.update()


def _world(obj, names) -> dict[str, Matrix]:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {name: (obj.matrix_world @ evaluated.pose.bones[name].matrix).copy() for name in names}


def _assert_same_pose(before: dict[str, Matrix], after: dict[str, Matrix]) -> None:
    for name, wanted in before.items():
        got = after[name]
        turn = wanted.to_quaternion().rotation_difference(got.to_quaternion()).angle
        assert turn < ANGLE, f"{name} turned {turn:.3g} rad"
        for offset in OFFSETS:
            moved = (wanted @ offset - got @ offset).length
            assert moved < POSITION, f"a point {offset} off {name} moved {moved:.3g} m"


def _bones(suffix: str = "") -> list[str]:
    return [f"thigh{suffix}", f"shin{suffix}", f"foot{suffix}"]


@pytest.fixture
def auto_keying(scene):
    """Auto Keying on, keying every channel it is given (5.2's default Only Insert Available would
    skip the controls' first keys)."""
    edit = bpy.context.preferences.edit
    available = edit.use_keyframe_insert_available
    edit.use_keyframe_insert_available = False
    scene.tool_settings.use_keyframe_insert_auto = True
    yield scene
    edit.use_keyframe_insert_available = available


def _snap(obj, operator) -> None:
    chain = obj.two_bone_ik.chains[obj.two_bone_ik.active_chain_index]
    pose_bone = obj.pose.bones[chain.lower_bone]
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=pose_bone):
        assert operator() == {"FINISHED"}


@pytest.mark.parametrize("roll", [0.0, 0.7, -2.0])
@pytest.mark.parametrize(("thigh", "shin"), POSES)
def test_add_on_an_fk_pose_off_the_rest_bend_plane_moves_no_bone(scene, roll, thigh, shin):
    obj = _rig(roll)
    _pose(obj, thigh, shin)
    before = _world(obj, _bones())
    add_chain_with_operator(obj, "shin")
    _assert_same_pose(before, _world(obj, _bones()))


@pytest.mark.parametrize(("thigh", "shin"), POSES[1:])
def test_snap_ik_to_fk_keeps_the_fk_orientations(scene, thigh, shin):
    obj = _rig(0.7)
    add_chain_with_operator(obj, "shin")
    chain = obj.two_bone_ik.chains[0]
    chain.enabled = False
    _pose(obj, thigh, shin)
    fk = _world(obj, _bones())
    _snap(obj, bpy.ops.pose.two_bone_ik_snap_ik_to_fk)
    chain.enabled = True
    bpy.context.view_layer.update()
    _assert_same_pose(fk, _world(obj, _bones()))
    # Snap FK to IK writes that pose back into the channels: turning the chain off moves nothing.
    _snap(obj, bpy.ops.pose.two_bone_ik_snap_fk_to_ik)
    chain.enabled = False
    bpy.context.view_layer.update()
    _assert_same_pose(fk, _world(obj, _bones()))


def test_add_with_mirror_keeps_both_legs(scene):
    sides = ((".L", 0.2), (".R", -0.2))
    bones = [bone for side, x in sides for bone in leg_bones(foot_tail=FOOT_TAIL, x=x, suffix=side)]
    obj = make_armature("Legs", bones)
    set_mode(obj, "EDIT")
    for bone in obj.data.edit_bones:
        bone.roll = 0.6 if bone.name.endswith(".L") else -0.6  # mirrored rolls
    set_mode(obj, "OBJECT")
    thigh, shin = POSES[2]
    _pose(obj, thigh, shin, ".L")
    _pose(obj, (thigh[0], -thigh[1], -thigh[2]), (shin[0], -shin[1], -shin[2]), ".R")
    before = _world(obj, _bones(".L") + _bones(".R"))
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=obj.pose.bones["shin.L"]):
        assert bpy.ops.pose.two_bone_ik_add(mirror=True) == {"FINISHED"}
    assert [(chain.upper_bone, chain.lower_bone) for chain in obj.two_bone_ik.chains] == [
        ("thigh.L", "shin.L"),
        ("thigh.R", "shin.R"),
    ]
    _assert_same_pose(before, _world(obj, _bones(".L") + _bones(".R")))


def test_snapped_rolls_are_keyed_with_auto_keying_and_play(auto_keying):
    """Snap IK to FK on two frames with Auto Keying: the rolls are keyed with the target and pole,
    so playing the shot gives each frame's FK orientations."""
    scene = auto_keying
    obj = _rig(0.3)
    add_chain_with_operator(obj, "shin")
    chain = obj.two_bone_ik.chains[0]
    wanted = {}
    for frame, (thigh, shin) in zip((1, 10), POSES[:2], strict=True):
        scene.frame_set(frame)
        chain.enabled = False
        _pose(obj, thigh, shin)
        for name in ("thigh", "shin"):
            obj.pose.bones[name].keyframe_insert("rotation_euler")
        wanted[frame] = _world(obj, _bones())
        _snap(obj, bpy.ops.pose.two_bone_ik_snap_ik_to_fk)
        chain.enabled = True
    paths = {fcurve.data_path for fcurve in fcurves(obj)}
    assert {'pose.bones["shin"]["IK Upper Roll"]', 'pose.bones["shin"]["IK Lower Roll"]'} <= paths
    for frame in (10, 1):
        scene.frame_set(frame)
        _assert_same_pose(wanted[frame], _world(obj, _bones()))


def test_rolls_survive_update_mechanism(scene):
    obj = _rig(0.0)
    _pose(obj, *POSES[0])
    before = _world(obj, _bones())
    add_chain_with_operator(obj, "shin")
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    bpy.context.view_layer.update()
    _assert_same_pose(before, _world(obj, _bones()))


@pytest.mark.parametrize(("first", "second"), [(0.2, -0.2), (3.0, 3.3)], ids=["across-zero", "across-pi"])
def test_snapped_rolls_interpolate_the_short_way(auto_keying, first, second):
    """Rolls keyed by Snap on two frames, on either side of half a turn, play between the keys
    within a small angle of the FK pose (the interpolation of IK against FK), never a turn around:
    each Snap takes the roll nearest the one already keyed."""
    scene = auto_keying
    obj = _rig(0.0)
    add_chain_with_operator(obj, "shin")
    chain = obj.two_bone_ik.chains[0]
    for frame, twist in ((1, first), (11, second)):
        scene.frame_set(frame)
        chain.enabled = False
        _pose(obj, (0.3, 0.0, 0.0), (0.5, twist, 0.0))  # the knee bent back past straight
        for name in ("thigh", "shin"):
            obj.pose.bones[name].keyframe_insert("rotation_euler")
        _snap(obj, bpy.ops.pose.two_bone_ik_snap_ik_to_fk)
        chain.enabled = True
    for frame in range(1, 12):
        scene.frame_set(frame)
        chain.enabled = True
        solved = _world(obj, _bones())
        chain.enabled = False
        fk = _world(obj, _bones())
        for name in _bones():
            turn = fk[name].to_quaternion().rotation_difference(solved[name].to_quaternion()).angle
            turn = min(turn, 2.0 * math.pi - turn)  # a quaternion and its negation: the same turn
            assert turn < 0.2, f"frame {frame}: {name} turned {turn:.3g} rad from FK"
