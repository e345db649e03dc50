# SPDX-License-Identifier: GPL-3.0-or-later
"""Each chain owns its network (docs/design.md, "The native network"): bones copied by a rigger's
edit (Symmetrize, Duplicate) carry constraints that copy the first chain's network bones, and a
chain added on the copies re-points them to a network of its own. Both legs then solve on their own,
to 1e-5 m, with their own parts."""

from __future__ import annotations

import bpy
import pytest
from blender_rig import (
    add_chain_with_operator,
    expected_world,
    make_legs,
    package,
    set_mode,
    solve_miss,
    update_mechanism,
    world_tail,
)
from mathutils import Vector

TOLERANCE = 1e-5  # m, legs about 2 m long


def _leg():
    """Armature "Legs": a hips bone parenting thigh.L/shin.L, bent a little so the rest bend plane
    is defined, with a chain added by the operator."""
    obj = make_legs(right=None, hips=True, bend=0.05)
    add_chain_with_operator(obj, "shin.L")
    return obj


def _copy_in_edit_mode(obj, how: str) -> tuple[str, str]:
    """Copy thigh.L and shin.L as a rigger would (``how``: "symmetrize" or "duplicate"); returns
    the copies' names (upper, lower)."""
    set_mode(obj, "EDIT")
    for bone in obj.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name in ("thigh.L", "shin.L")
    with bpy.context.temp_override(active_object=obj, object=obj):
        if how == "symmetrize":
            assert bpy.ops.armature.symmetrize() == {"FINISHED"}
            names = ("thigh.R", "shin.R")
        else:
            assert bpy.ops.armature.duplicate() == {"FINISHED"}
            names = ("thigh.L.001", "shin.L.001")
            for name in names:
                bone = obj.data.edit_bones[name]
                bone.head.x -= 0.4
                bone.tail.x -= 0.4
    set_mode(obj, "POSE")
    return names


@pytest.mark.parametrize("how", ["symmetrize", "duplicate"])
def test_a_chain_added_on_copied_bones_gets_its_own_network(scene, how):
    obj = _leg()
    upper, lower = _copy_in_edit_mode(obj, how)
    # The copies carry the first chain's constraints, pointing at its network bones.
    assert obj.pose.bones[upper].constraints["Two-Bone IK"].subtarget == "MCH-IK-thigh.L"
    add_chain_with_operator(obj, lower)

    chains = obj.two_bone_ik.chains
    legs = (("thigh.L", "shin.L"), (upper, lower))
    for chain, (chain_upper, chain_lower) in zip(chains, legs, strict=True):
        for bone in (chain_upper, chain_lower):
            subtarget = obj.pose.bones[bone].constraints["Two-Bone IK"].subtarget
            assert subtarget == f"MCH-IK-{bone}", (chain.name, bone, subtarget)
    chains[0].target.location += Vector((0.1, -0.3, 0.2))
    chains[1].target.location += Vector((-0.1, -0.5, 0.1))
    bpy.context.view_layer.update()
    for chain, (chain_upper, chain_lower) in zip(chains, legs, strict=True):
        joint, end, _ = expected_world(
            obj,
            chain.target.matrix_world.translation,
            chain.pole.matrix_world.translation,
            chain_upper,
            chain_lower,
        )
        assert (world_tail(obj, chain_upper) - joint).length < TOLERANCE, chain.name
        assert (world_tail(obj, chain_lower) - end).length < TOLERANCE, chain.name
        assert chain.state == "OK", chain.status


def test_copied_constraints_on_bones_of_no_chain_are_shown(scene):
    """Symmetrize copies the chain's constraints onto the new bones, which then follow the first
    leg: the panel names them until a chain is added on them (docs/design.md, "The native
    network")."""
    obj = _leg()
    _copy_in_edit_mode(obj, "symmetrize")
    copies = package().chain.adopt.copies
    assert copies(obj) == {"shin.L": ["thigh.R", "shin.R"]}
    add_chain_with_operator(obj, "shin.R")
    assert copies(obj) == {}


def _legs():
    """Armature "Legs" with a chain on each leg (hips -> thigh.L/.R -> shin.L/.R), targets raised."""
    obj = make_legs(hips=True, bend=0.05)
    add_chain_with_operator(obj, "shin.L")
    add_chain_with_operator(obj, "shin.R")
    set_mode(obj, "OBJECT")
    for chain in obj.two_bone_ik.chains:
        chain.target.location.z += 0.3
    bpy.context.view_layer.update()
    return obj


def test_separated_bones_take_their_chain_after_update_mechanism_and_the_left_chain_says_so(scene):
    """Separate (Edit Mode, P) copies the object, chains included, into the new armature: there
    the chain of the separated leg is rebuilt by Update Mechanism; each chain whose bones went to
    the other armature says so, and Remove clears it with the network it left behind."""
    obj = _legs()
    set_mode(obj, "EDIT")
    for bone in obj.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name in ("thigh.R", "shin.R")
    with bpy.context.temp_override(active_object=obj, object=obj, selected_editable_objects=[obj]):
        assert bpy.ops.armature.separate() == {"FINISHED"}
    set_mode(obj, "OBJECT")
    new = next(other for other in bpy.data.objects if other.type == "ARMATURE" and other != obj)
    bpy.context.view_layer.update()
    gone = {obj: "shin.R", new: "shin.L"}
    for armature, name in gone.items():
        status = armature.two_bone_ik.chains[name].status
        assert "not found in" in status and "remove the chain" in status, status
    assert new.two_bone_ik.chains["shin.R"].state == "ERROR"  # its network stayed behind
    for armature, name in gone.items():
        update_mechanism(armature)
        with bpy.context.temp_override(active_object=armature, object=armature):
            assert bpy.ops.pose.two_bone_ik_remove(chain=name) == {"FINISHED"}
    assert not [bone.name for bone in obj.data.bones if ".R" in bone.name]
    for armature, name in ((obj, "shin.L"), (new, "shin.R")):
        chain = armature.two_bone_ik.chains[name]
        chain.target.location += Vector((0.1, -0.2, 0.1))
        bpy.context.view_layer.update()
        assert [each.name for each in armature.two_bone_ik.chains] == [name]
        assert chain.state == "OK", chain.status
        assert solve_miss(armature, chain) < TOLERANCE


def test_an_appended_rig_is_a_copy_with_chains_of_its_own(scene, tmp_path):
    """A rig appended from another file (with its targets and poles) solves on its own controls,
    and moving them leaves the original rig alone."""
    obj = _legs()
    controls = {chain.target for chain in obj.two_bone_ik.chains} | {
        chain.pole for chain in obj.two_bone_ik.chains
    }
    path = str(tmp_path / "library.blend")
    bpy.data.libraries.write(path, {obj} | controls, fake_user=True)
    with bpy.data.libraries.load(path, link=False) as (source, appended):
        appended.objects = list(source.objects)
    for other in appended.objects:
        scene.collection.objects.link(other)
    new = next(other for other in appended.objects if other.type == "ARMATURE")
    new.location.x += 3.0
    for chain in new.two_bone_ik.chains:
        assert chain.target in appended.objects and chain.pole in appended.objects
        chain.target.location.y += 0.2
    bpy.context.view_layer.update()
    for armature in (obj, new):
        for chain in armature.two_bone_ik.chains:
            assert chain.state == "OK", chain.status
            assert solve_miss(armature, chain) < TOLERANCE, (armature.name, chain.name)
