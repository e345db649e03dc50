# SPDX-License-Identifier: GPL-3.0-or-later
"""Driver regressions from a hostile review: hidden cycles, shared bones, NaN influence, tiny scales."""

import math

import bpy
import pytest
from blender_rig import add_chain, assert_close, make_empty, make_leg, update_mechanism, world_tail
from mathutils import Vector

from solver import solve_two_bone_ik

THIGH = ((0, 0, 0), (0, 1, 0))
SHIN = ((0, 1, 0), (0, 2, 0))


def leg_with_chain():
    obj = make_leg(thigh=THIGH, shin=SHIN)
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    bpy.context.view_layer.update()
    return obj, chain


def pose_of(obj):
    return [bone.matrix_basis.copy() for bone in obj.pose.bones]


def test_armature_constraint_on_the_target_is_a_cycle(scene):
    """A target that follows the shin through an Armature constraint (constraint.targets) is refused as a
    cycle."""
    obj, chain = leg_with_chain()
    before = pose_of(obj)
    constraint = chain.target.constraints.new("ARMATURE")
    item = constraint.targets.new()
    item.target, item.subtarget = obj, "shin"
    for _ in range(3):
        obj.update_tag()
        bpy.context.view_layer.update()
    assert "cycle" in chain.status
    assert pose_of(obj) == before


def test_vertex_parent_on_a_mesh_the_chain_deforms_is_a_cycle(scene):
    """A target vertex-parented to a mesh skinned by the shin is refused as a cycle; object parenting is
    not."""
    obj, chain = leg_with_chain()
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata([(0, 2, 0), (0, 1, 0)], [], [])
    skin = bpy.data.objects.new("Skin", mesh)
    bpy.context.scene.collection.objects.link(skin)
    skin.vertex_groups.new(name="shin").add([0, 1], 1.0, "REPLACE")
    skin.modifiers.new("Armature", "ARMATURE").object = obj
    target = chain.target
    target.parent = skin
    target.parent_type = "OBJECT"
    bpy.context.view_layer.update()
    assert chain.status == ""
    before = pose_of(obj)
    target.parent_type = "VERTEX"
    target.parent_vertices[0] = 0
    for _ in range(3):
        obj.update_tag()
        bpy.context.view_layer.update()
    assert "cycle" in chain.status
    assert pose_of(obj) == before


def test_chains_sharing_a_bone_solve_only_the_first(scene):
    """Two chains on the same bone: the first solves, the later one says so and writes nothing until
    the first is removed."""
    obj = make_leg(thigh=THIGH, shin=SHIN)
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        foot = obj.data.edit_bones.new("foot")
        foot.head, foot.tail, foot.parent, foot.use_connect = (
            (0, 2, 0),
            (0, 2.5, 0),
            obj.data.edit_bones["shin"],
            True,
        )
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    leg = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    foot_chain = add_chain(obj, make_empty("FootTarget", (0.5, 2.0, 0.2)), None, upper="shin", lower="foot")
    bpy.context.view_layer.update()
    assert leg.status == ""
    assert "is also driven by chain" in foot_chain.status and "'shin'" in foot_chain.status
    assert not foot_chain.reachable
    assert_close(world_tail(obj, "shin"), (1.2, 0, 0.5), 2e-5)
    # The mechanism of a bone belongs to the first chain using it, enabled or not (as a bone's
    # constraint belongs to its stack): disabling that chain does not hand the bone over; removing
    # it and updating the mechanism does.
    leg.enabled = False
    bpy.context.view_layer.update()
    assert "is also driven by chain" in foot_chain.status
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove(chain="shin") == {"FINISHED"}
    update_mechanism(obj)
    bpy.context.view_layer.update()
    assert obj.two_bone_ik.chains[0].status == "No pole: the joint bends as in the rest pose"


def test_nan_influence_is_a_status_and_keeps_the_pose(scene):
    """An influence set to NaN from Python is a status, with the last pose kept; a number again, it solves."""
    obj, chain = leg_with_chain()
    before = pose_of(obj)
    chain.influence = math.nan
    chain.target.location = (0.4, 0.3, 0.2)
    bpy.context.view_layer.update()
    assert "Influence" in chain.status
    assert pose_of(obj) == before
    chain.influence = 1.0
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "shin"), (0.4, 0.3, 0.2), 2e-5)


@pytest.mark.parametrize("scale", [1e-4, 5e-5])
def test_small_uniform_armature_scale_solves(scene, scale):
    """A legitimate small armature scale is solved (the scale test is relative, not an absolute
    determinant)."""
    obj, chain = leg_with_chain()
    obj.scale = (scale, scale, scale)
    chain.target.location = Vector((1.0, 0.2, 0.4)) * scale
    chain.pole.location = Vector((1.2, 0.5, 0.5)) * scale
    bpy.context.view_layer.update()
    assert chain.status == ""
    expected = solve_two_bone_ik((0, 0, 0), (1.0, 0.2, 0.4), (1.2, 0.5, 0.5), 1.0, 1.0, tolerance=1e-6)
    assert_close(world_tail(obj, "shin"), Vector(expected.end) * scale, 2e-5 * 2 * scale)


def test_target_at_root_with_a_pole_is_not_a_pole_warning(scene):
    """Equal bones folded onto the root by a target at the root: the pole chose the fold, no 'pole on the
    line' status."""
    obj, chain = leg_with_chain()
    chain.target.location = (0, 0, 0)
    chain.pole.location = (0, 0, 1)
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert chain.reachable
    assert_close(world_tail(obj, "thigh"), (0, 0, 1), 2e-5)
    assert_close(world_tail(obj, "shin"), (0, 0, 0), 2e-5)
