# SPDX-License-Identifier: GPL-3.0-or-later
"""Tools that rewrite every bone of a rig (docs/design.md, "Tools that rewrite every bone"): Rigify's
Convert Rotation Modes and a script setting every bone's rotation mode leave the chain following
its target as Blender's IK does, with Twist and both rolls set; where a tool removes what the chain
is made of (``animation_data_clear`` removes its drivers), the status names it and Update Mechanism
repairs it. Measured on evaluated world positions."""

from __future__ import annotations

import pathlib

import bpy
import pytest
from blender_rig import (
    assert_close,
    leg_with_ik_twin,
    move_control,
    package,
    run_probe,
    set_mode,
    update_mechanism,
    world_tail,
)

PROBE = pathlib.Path(__file__).with_name("every_bone_tools_probe.py")
TOLERANCE = 1e-5  # metres: float32 on a 2 m leg
IK_TOLERANCE = 1e-3  # metres: Blender's IK iterates, and stops 2e-4 m short here
MOVED = (0.3, 1.2, -0.5)  # world, metres: where the target control goes (reachable)


def _move_target(chain, world=MOVED) -> None:
    move_control(chain, "target", world)


def _set_every_mode(mode: str):
    def run(obj) -> None:
        for pose_bone in obj.pose.bones:
            pose_bone.rotation_mode = mode

    return run


@pytest.mark.parametrize("mode", ["QUATERNION", "AXIS_ANGLE", "ZYX"])
def test_a_script_setting_every_bones_rotation_mode_leaves_the_chain_following(scene, mode):
    """A script sets every bone's rotation mode (the network's hidden bones included) on the rig and
    on a twin posed by Blender's IK; then the target moves: the foot ends where Blender's IK puts
    it, and every bone where the same move puts it without the script (rolls and Twist kept). A
    lower bone in a mode its own turn is not read in is named in the status (WARNING) until
    Update Mechanism."""
    reference, _, chain = leg_with_ik_twin("Reference")
    _move_target(chain)
    wanted = [world_tail(reference, bone) for bone in ("thigh", "shin", "foot")]
    obj, native, chain = leg_with_ik_twin()
    for rig in (obj, native):
        _set_every_mode(mode)(rig)
    bpy.context.view_layer.update()
    _move_target(chain)
    for bone, tail in zip(("thigh", "shin", "foot"), wanted, strict=True):
        assert_close(world_tail(obj, bone), tail, TOLERANCE)
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert_close(world_tail(native, "shin"), target, IK_TOLERANCE)
    if mode == "QUATERNION":  # the lower bone's mode at the build: its own turn is read
        assert chain.state == "OK", chain.status
        return
    # Another mode of the lower bone: the pose is right (it has no own turn here), and the status
    # says its own turn is not read until Update Mechanism rebuilds for that mode.
    assert chain.state == "WARNING" and "after the chain was built" in chain.status, chain.status
    update_mechanism(obj)
    bpy.context.view_layer.update()
    assert obj.two_bone_ik.chains[0].state == "OK", obj.two_bone_ik.chains[0].status
    for bone, tail in zip(("thigh", "shin", "foot"), wanted, strict=True):
        assert_close(world_tail(obj, bone), tail, TOLERANCE)


def test_rigify_convert_rotation_modes_leaves_chains_following_on_a_leg_and_a_rigify_human():
    """Rigify's Convert Rotation Modes (all bones, to Quaternion) on a leg's chain and on a Rigify
    human's four limbs put on chains: after the controls move, the deform bones are where the same
    move puts them without the tool, and every chain reads OK. (Before: 0.058 m off on the leg,
    0.31 m on the human, and ERROR.)"""
    result, _ = run_probe(PROBE)
    for rig in ("leg", "human"):
        assert result[rig]["off"] < TOLERANCE, result
        for name, (state, status) in result[rig]["states"].items():
            assert state == "OK", (rig, name, status)


def test_a_network_built_before_keeps_playing_and_update_mechanism_adds_the_mode_drivers(scene):
    """A network built before the rotation modes were driven (no driver on them) still follows its
    target; a tool setting every bone's mode then makes it ERROR, named, and Update Mechanism
    rebuilds it with the drivers, after which the same tool leaves it following."""
    obj, _, chain = leg_with_ik_twin()
    network = package().network
    names = network.naming.parts("thigh", "shin")
    for field in network.spec.MODE_DRIVEN:
        assert obj.driver_remove(f'pose.bones["{getattr(names, field)}"].rotation_mode')
    bpy.context.view_layer.update()
    _move_target(chain)
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert chain.state == "OK", chain.status
    _set_every_mode("QUATERNION")(obj)
    bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "Update Mechanism" in chain.status, chain.status
    update_mechanism(obj)
    chain = obj.two_bone_ik.chains[0]
    _set_every_mode("QUATERNION")(obj)
    bpy.context.view_layer.update()
    _move_target(chain, (-0.2, 1.0, 0.6))
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert chain.state == "OK", chain.status


def test_clearing_the_armatures_animation_data_is_named_and_update_mechanism_repairs_it(scene):
    """``animation_data_clear`` removes the network's drivers: the chain is ERROR, its status says to
    run Update Mechanism, which puts the foot back on the moved target."""
    obj, _, chain = leg_with_ik_twin()
    obj.animation_data_clear()
    _move_target(chain)
    assert chain.state == "ERROR", chain.status
    assert "driver on 'MCH-IK-shin-roll' (rotation_euler)" in chain.status, chain.status
    assert "Update Mechanism" in chain.status
    update_mechanism(obj)
    chain = obj.two_bone_ik.chains[0]
    bpy.context.view_layer.update()
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert chain.state == "OK", chain.status


def test_apply_pose_as_rest_pose_of_every_bone_is_named_and_update_mechanism_repairs_it(scene):
    """Apply Pose as Rest Pose of every bone (the network's hidden bones included) bakes the
    network's pose into its rests: the chain is ERROR, its status names the changed rest pose, and
    Update Mechanism rebuilds it on the new rest, after which the foot follows the moved target
    as Blender's IK does on the twin rig."""
    obj, native, chain = leg_with_ik_twin()
    _move_target(chain)
    for rig in (obj, native):
        set_mode(rig, "POSE")
        with bpy.context.temp_override(active_object=rig, object=rig):
            assert bpy.ops.pose.armature_apply(selected=False) == {"FINISHED"}
        set_mode(rig, "OBJECT")
    bpy.context.view_layer.update()
    chain = obj.two_bone_ik.chains[0]
    assert chain.state == "ERROR" and "rest pose" in chain.status, chain.status
    update_mechanism(obj)
    chain = obj.two_bone_ik.chains[0]
    _move_target(chain, (-0.2, 1.0, 0.6))
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert_close(world_tail(native, "shin"), target, IK_TOLERANCE)
    assert chain.state == "OK", chain.status
