# SPDX-License-Identifier: GPL-3.0-or-later
"""Squash and stretch above the chain: an uneven pose scale of a parent (the hips' keyed scale).

The chain's bones are rigid in the frame of the chain's root, which carries the parents' scale;
the network and the status solve there (docs/contract.md, D6), so the foot is on every target the
scaled leg can reach, where Blender's IK constraint, the control here, misses.
"""

import bpy
import pytest
from blender_rig import (
    add_chain,
    add_chain_with_operator,
    assert_close,
    make_empty,
    make_legs,
    update_mechanism,
    world_head,
    world_tail,
)
from mathutils import Vector

# The hips' keyed scales (frames 1 and 11): volume-keeping squash and stretch.
SCALES = ((1.25, 0.64, 1.25), (0.8, 1.5625, 0.8))
# Directions and distances (rest units, from the hip joint) of targets the scaled leg reaches.
DIRECTIONS = ((0.3, 0.5, 0.1), (-0.4, 0.6, 0.5), (0.0, 1.0, -0.3), (0.5, 0.2, 0.6), (-0.2, 0.3, -0.7))
DISTANCES = (0.7, 1.4, 1.95)
CHAIN = 2.0  # thigh + shin, rest
TOLERANCE = 1e-5 * CHAIN


def legs_with_keyed_hips(name: str):
    """make_legs' armature with the hips' scale keyed to SCALES at frames 1 and 11."""
    obj = make_legs(hips=True)
    obj.name = name
    hips = obj.pose.bones["hips"]
    for frame, scale in zip((1, 11), SCALES, strict=True):
        hips.scale = scale
        hips.keyframe_insert("scale", frame=frame)
    return obj


def scaled_point(obj, rest_offset) -> Vector:
    """World position of the hip joint plus ``rest_offset`` (armature rest axes), carried by the
    hips' evaluated pose (its scale included): where a rigid leg under the hips can put its foot."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    hips = evaluated.pose.bones["hips"]
    rest = hips.bone.matrix_local
    local = rest.inverted() @ (Vector((0.2, 0.0, 0.0)) + Vector(rest_offset))
    return obj.matrix_world @ (hips.matrix @ local)


def blender_ik_legs(target, pole):
    """The control: the same legs with Blender's IK constraint on the left shin."""
    obj = legs_with_keyed_hips("Native")
    constraint = obj.pose.bones["shin.L"].constraints.new("IK")
    constraint.target, constraint.pole_target, constraint.chain_count = target, pole, 2
    return obj


@pytest.mark.parametrize("frame", [1, 11])
def test_the_foot_is_on_every_target_the_scaled_leg_reaches(scene, frame):
    """Under the hips' keyed squash or stretch, targets the scaled leg reaches (15 a frame): the foot
    on each to 1e-5 x the chain, the knee in the plane of the hip, target and pole, status OK; and
    never farther than Blender's IK on the same legs (which misses by up to decimetres)."""
    obj = legs_with_keyed_hips("Ours")
    target, pole = make_empty("Target", (0.0, 0.0, 0.0)), make_empty("Pole", (0.0, 0.0, 0.0))
    chain = add_chain(obj, target, pole, "thigh.L", "shin.L")
    native_target, native_pole = make_empty("Native Target", (0, 0, 0)), make_empty("Native Pole", (0, 0, 0))
    native = blender_ik_legs(native_target, native_pole)
    native.location.x = 5.0
    scene.frame_set(frame)
    worst_native = 0.0
    for direction in DIRECTIONS:
        for distance in DISTANCES:
            offset = Vector(direction).normalized() * distance
            bend = Vector((0.0, 0.0, 1.0)).cross(offset) + Vector((0.0, 0.0, 0.3))
            for rig, aim, side in ((obj, target, pole), (native, native_target, native_pole)):
                aim.location = scaled_point(rig, offset)
                side.location = scaled_point(rig, offset * 0.5 + bend)
            bpy.context.view_layer.update()
            assert chain.state == "OK", chain.status
            assert_close(world_tail(obj, "shin.L"), target.location, TOLERANCE)
            root, knee = world_head(obj, "thigh.L"), world_tail(obj, "thigh.L")
            normal = (target.location - root).cross(pole.location - root).normalized()
            assert abs((knee - root).dot(normal)) <= TOLERANCE
            ours = (world_tail(obj, "shin.L") - target.location).length
            theirs = (world_tail(native, "shin.L") - native_target.location).length
            assert ours <= theirs + TOLERANCE
            worst_native = max(worst_native, theirs)
    assert worst_native > 0.05  # the control does miss: the test measures something


def test_add_under_squash_keeps_the_pose(scene):
    """Add with the hips squashed (keyed scale, frame 1) and the leg bent keeps the leg where its FK
    pose was, with status OK (as on a Rigify rig whose torso controls scale the leg bones a little,
    where the knee once moved 2.18 cm with status OK)."""
    obj = legs_with_keyed_hips("Legs")
    scene.frame_set(1)
    obj.pose.bones["thigh.L"].rotation_mode = "XYZ"
    obj.pose.bones["thigh.L"].rotation_euler = (0.4, 0.0, 0.2)
    obj.pose.bones["shin.L"].rotation_mode = "XYZ"
    obj.pose.bones["shin.L"].rotation_euler = (0.9, 0.0, 0.0)
    bpy.context.view_layer.update()
    before = [world_tail(obj, "thigh.L"), world_tail(obj, "shin.L")]
    chain = add_chain_with_operator(obj, "shin.L", controls="BONES")
    bpy.context.view_layer.update()
    assert chain.state == "OK", chain.status
    for bone, point in zip(("thigh.L", "shin.L"), before, strict=True):
        assert_close(world_tail(obj, bone), point, TOLERANCE)
    scene.frame_set(11)  # stretched: the foot stays on its (unscaled) control bone
    assert chain.state == "OK", chain.status


def test_a_network_built_before_says_to_update_it(scene):
    """A network whose tracks work in pose space (as built before squash and stretch was solved)
    misses under the hips' squash: its status says to run Update Mechanism, which makes it exact."""
    obj = legs_with_keyed_hips("Legs")
    target, pole = make_empty("Target", (0.3, 0.5, 0.4)), make_empty("Pole", (0.2, 1.0, 0.5))
    add_chain(obj, target, pole, "thigh.L", "shin.L")
    for bone, name in (("MCH-IK-shin.L-aim", "Aim"), ("MCH-IK-shin.L", "Bend")):
        track = obj.pose.bones[bone].constraints[name]
        track.owner_space = track.target_space = "POSE"
    scene.frame_set(1)
    chain = obj.two_bone_ik.chains[0]
    assert chain.state == "OFF_TARGET" and "Update Mechanism" in chain.status, chain.status
    update_mechanism(obj)
    scene.frame_set(1)
    chain = obj.two_bone_ik.chains[0]
    assert chain.state == "OK", chain.status
    assert_close(world_tail(obj, "shin.L"), target.location, TOLERANCE)
