# SPDX-License-Identifier: GPL-3.0-or-later
"""End-to-end checks: a chain reaches its target, Add keeps the pose, random solves match the
solver, one handler after enabling twice, the panel's poll."""

import random

import addon_utils
import bpy
import pytest
from blender_rig import (
    MODULE,
    add_chain,
    add_chain_with_operator,
    assert_close,
    control_point,
    expected_handlers,
    handler_names,
    make_empty,
    make_leg,
    move_control,
    world_head,
    world_tail,
)
from mathutils import Euler, Matrix, Vector

from solver import solve_two_bone_ik

TOLERANCE = 1e-5  # metres, Blender's float32 data on a ~1 m chain


@pytest.fixture(params=["BONES", "EMPTIES"])
def controls(request) -> str:
    """Add's two kinds of controls: the tests of this module run on both."""
    return request.param


def add_with_operator(obj, controls: str, lower="shin"):
    """Run pose.two_bone_ik_add in Pose Mode with ``lower`` active; returns the new chain."""
    return add_chain_with_operator(obj, lower, controls=controls)


def test_leg_reaches_target(scene):
    """Moving the target and updating puts the shin tail on the target and the knee toward the pole."""
    obj = make_leg(thigh=((0, 0, 0), (0, 1, 0)), shin=((0, 1, 0), (0, 2, 0)))
    target = make_empty("Target", (1.2, 0, 0.5))
    pole = make_empty("Pole", (1.2, 0.5, 0.5))
    chain = add_chain(obj, target, pole)
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "thigh"), (0.6, 0.7599342, 0.25), 2e-5)
    assert_close(world_tail(obj, "shin"), (1.2, 0, 0.5), 2e-5)
    assert chain.reachable
    target.location = (0.3, 1.0, -0.4)
    bpy.context.view_layer.update()
    expected = solve_two_bone_ik((0, 0, 0), (0.3, 1.0, -0.4), (1.2, 0.5, 0.5), 1.0, 1.0)
    assert_close(world_tail(obj, "thigh"), expected.joint, 2e-5)
    assert_close(world_tail(obj, "shin"), expected.end, 2e-5)


def test_add_operator_keeps_pose_on_transformed_armature(scene, controls):
    """A translated, rotated armature with a posed chain does not move when the operator adds a chain."""
    obj = make_leg()
    obj.location = (1.0, -2.0, 0.5)
    obj.rotation_euler = (0.3, -0.2, 1.1)
    bpy.context.view_layer.update()
    obj.pose.bones["thigh"].rotation_mode = "XYZ"
    obj.pose.bones["thigh"].rotation_euler = (0.4, 0.1, -0.2)
    obj.pose.bones["shin"].rotation_quaternion = Euler((-0.7, 0.0, 0.05)).to_quaternion()
    bpy.context.view_layer.update()
    before = {bone: (world_head(obj, bone), world_tail(obj, bone)) for bone in ("thigh", "shin")}
    chain = add_with_operator(obj, controls)
    bpy.context.view_layer.update()
    bpy.context.view_layer.update()
    assert chain.status == "", chain.status
    assert chain.reachable
    for bone, (head, tail) in before.items():
        assert_close(world_head(obj, bone), head, TOLERANCE)
        assert_close(world_tail(obj, bone), tail, TOLERANCE)
    assert_close(control_point(chain, "target"), before["shin"][1], TOLERANCE)


def test_add_operator_on_straight_chain_keeps_pose(scene, controls):
    """A straight chain keeps its pose and roll when a chain is added (the pole follows the rest bend
    side)."""
    obj = make_leg(thigh=((0, 0, 2), (0, 0, 1)), shin=((0, 0, 1), (0, 0, 0)))
    before = {pose_bone.name: Matrix(pose_bone.matrix) for pose_bone in obj.pose.bones}
    add_with_operator(obj, controls)
    bpy.context.view_layer.update()
    for name, matrix in before.items():  # not the new network and control bones
        pose_bone = obj.pose.bones[name]
        assert (
            max(
                abs(p - q)
                for row_p, row_q in zip(pose_bone.matrix, matrix, strict=True)
                for p, q in zip(row_p, row_q, strict=True)
            )
            < 1e-5
        )


@pytest.mark.parametrize("seed", range(3))
def test_random_targets_match_solver(scene, seed, controls):
    """For random targets and poles the evaluated tails sit on the solver's joint and end (armature space)."""
    rng = random.Random(seed)
    obj = make_leg()
    obj.location = (rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-3, 3))
    obj.rotation_euler = (rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-3, 3))
    bpy.context.view_layer.update()
    chain = add_with_operator(obj, controls)
    bone_upper, bone_lower = obj.data.bones["thigh"], obj.data.bones["shin"]
    upper_length = (bone_lower.head_local - bone_upper.head_local).length
    lower_length = bone_lower.length
    for _ in range(25):
        target = obj.matrix_world @ Vector([rng.uniform(-1.2, 1.2) for _ in range(3)])
        pole = obj.matrix_world @ Vector([rng.uniform(-2, 2) for _ in range(3)])
        move_control(chain, "target", target)
        move_control(chain, "pole", pole)
        to_armature = obj.matrix_world.inverted()
        root = obj.pose.bones["thigh"].head
        expected = solve_two_bone_ik(
            root,
            to_armature @ target,
            to_armature @ pole,
            upper_length,
            lower_length,
            tolerance=1e-6,
        )
        assert chain.status == "", chain.status
        joint_world = obj.matrix_world @ Vector(expected.joint)
        end_world = obj.matrix_world @ Vector(expected.end)
        assert_close(world_tail(obj, "thigh"), joint_world, TOLERANCE)
        assert_close(world_tail(obj, "shin"), end_world, TOLERANCE)
        assert chain.reachable == expected.reachable
        assert_close(chain.joint, joint_world, TOLERANCE)
        assert_close(chain.end, end_world, TOLERANCE)
        shortfall = 0.0 if expected.reachable else (end_world - target).length
        assert chain.shortfall == pytest.approx(shortfall, abs=TOLERANCE)


def test_unchanged_update_writes_nothing(scene, controls):
    """After a solve, further updates with nothing changed leave matrix_basis bit-identical (no
    self-feeding)."""
    obj = make_leg()
    chain = add_with_operator(obj, controls)
    move_control(chain, "target", control_point(chain, "target") + Vector((0.2, 0.0, 0.0)))
    written = [Matrix(pose_bone.matrix_basis) for pose_bone in obj.pose.bones]
    for _ in range(3):
        bpy.context.view_layer.update()
        bpy.context.evaluated_depsgraph_get().update()
    assert [Matrix(pose_bone.matrix_basis) for pose_bone in obj.pose.bones] == written


def test_enable_disable_twice_leaves_one_handler(scene):
    """Disabling and enabling the extension twice leaves exactly our handlers (blender_rig's
    expected_handlers: the upgrade of older files on load_post, and on Blender 4.4 alone the one
    that makes Enabled's keys constant), none when disabled. (There used to be one per update and
    frame change on every version: Blender evaluates the chains' networks itself, no Python runs
    per update.)"""
    for _ in range(2):
        addon_utils.disable(MODULE, default_set=True)
        assert all(len(found) == 0 for found in handler_names().values())
        assert not hasattr(bpy.types.Object, "two_bone_ik")
        assert addon_utils.enable(MODULE, default_set=True, handle_error=None) is not None
        assert handler_names() == expected_handlers()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert handler_names() == expected_handlers()


def test_panel_polls_for_armatures_only(scene):
    """The sidebar panel shows for an active armature and hides for other objects."""
    panel = bpy.types.VIEW3D_PT_two_bone_ik
    obj = make_leg()
    with bpy.context.temp_override(object=obj, active_object=obj):
        assert panel.poll(bpy.context)
    empty = make_empty("Empty", (0, 0, 0))
    with bpy.context.temp_override(object=empty, active_object=empty):
        assert not panel.poll(bpy.context)
