# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's clear tools on every bone, the network's hidden bones included (docs/design.md, "Tools
that rewrite every bone"): Clear User Transforms (all bones, or every bone selected) and Clear
Transform All, Location, Rotation and Scale reset the network bones' channels, among them the
start turns the network solves from (the aim bone's forward, the solved lower bone's bend: network/
spec.py ``START``). The chain must keep following its target exactly as before, in every case
including those the start turns exist for (the target at the root, where forward is +X: contract
D2; the rolls, which turn from the lower bone's start), and read OK. Measured on evaluated world
matrices of the leg's bones, next to Blender's IK constraint on a twin rig."""

from __future__ import annotations

import bpy
import pytest
from blender_rig import (
    assert_close,
    leg_bones,
    leg_with_ik_twin,
    make_armature,
    move_control,
    package,
    set_mode,
    update_mechanism,
    world_tail,
)

TOLERANCE = 1e-5  # metres (and matrix entries): float32 on a 2 m leg
IK_TOLERANCE = 1e-3  # metres: Blender's IK iterates, and stops 2e-4 m short here
BONES = ("thigh", "shin", "foot")
# Where the target control goes (world, metres; the leg's root is at the origin, its reach 2 m):
TARGETS = {
    "reachable": (0.3, 1.2, -0.5),
    "at the root": (0.0, 0.0, 0.0),  # forward is +X there (D2): the aim bone's start
    "past reach": (0.5, 2.5, 0.4),  # a straight leg
    "near the root": (0.0, 0.01, -0.02),  # a folded leg
}
# Each tool: (operator, keyword arguments, whether it acts on the selected bones only).
TOOLS = {
    "Clear User Transforms, all bones": ("user_transforms_clear", {"only_selected": False}, False),
    "Clear User Transforms, selected": ("user_transforms_clear", {"only_selected": True}, True),
    "Clear Transform All": ("transforms_clear", {}, True),
    "Clear Location": ("loc_clear", {}, True),
    "Clear Rotation": ("rot_clear", {}, True),
    "Clear Scale": ("scale_clear", {}, True),
}


def _clear(obj, tool: str) -> bool:
    """Run ``tool`` (:data:`TOOLS`) on every bone of ``obj``: the selected ones with the network's
    bone collection shown and every bone selected. Returns whether the tool reached the network's
    hidden bones: it reset a channel of the hint bone (no driver there), offset for the check and
    put back after it."""
    operator, options, selected = TOOLS[tool]
    if selected:
        collection = obj.data.collections_all.get(package().network.layout.COLLECTION)
        if collection is not None:
            collection.is_visible = True
        for bone in obj.data.bones:
            package().compat.bone_selection_owner(obj, bone.name).select = True
    chain = obj.two_bone_ik.chains[0] if len(obj.two_bone_ik.chains) else None
    names = package().network.naming.chain_parts(chain) if chain else None
    hint = obj.pose.bones.get(names.hint) if names is not None else None
    rest = {"location": (0.0, 0.0, 0.0), "rotation_quaternion": (1.0, 0.0, 0.0, 0.0), "scale": (1.0,) * 3}
    if hint is not None:
        for channel, value in rest.items():
            setattr(hint, channel, [entry + 1e-3 for entry in value])
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert getattr(bpy.ops.pose, operator)(**options) == {"FINISHED"}
    set_mode(obj, "OBJECT")
    reached = hint is not None and any(
        tuple(getattr(hint, channel)) == value for channel, value in rest.items()
    )
    for channel, value in rest.items() if hint is not None else ():
        setattr(hint, channel, value)
    bpy.context.view_layer.update()
    return reached


def _world(obj) -> list:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return [obj.matrix_world @ evaluated.pose.bones[bone].matrix for bone in BONES]


def _assert_same(obj, wanted) -> None:
    for actual, expected in zip(_world(obj), wanted, strict=True):
        assert_close(actual.translation, expected.translation, TOLERANCE)
        for column in range(3):
            assert_close(actual.col[column].xyz, expected.col[column].xyz, TOLERANCE)


@pytest.mark.parametrize("tool", list(TOOLS))
def test_a_clear_tool_on_every_bone_leaves_the_chain_following(scene, tool):
    """The tool on every bone of the rig and its twin, then the target moves: every bone is where
    the same move puts it without the tool (Twist and rolls kept), the foot where Blender's IK puts
    it, and the chain reads OK."""
    reference, _, chain = leg_with_ik_twin("Reference")
    move_control(chain, "target", TARGETS["reachable"])
    wanted = _world(reference)
    obj, native, chain = leg_with_ik_twin()
    _clear(native, tool)
    reached = _clear(obj, tool)
    assert reached, "the tool reaches the network's bones"
    bpy.context.view_layer.update()
    move_control(chain, "target", TARGETS["reachable"])
    _assert_same(obj, wanted)
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(native, "shin"), target, IK_TOLERANCE)
    assert chain.state == "OK", chain.status


@pytest.mark.parametrize("where", list(TARGETS))
def test_clear_user_transforms_keeps_the_start_turns_where_they_matter(scene, where):
    """Clear User Transforms of every bone, then the target goes where the start turns decide the
    pose (at the root: forward +X; straight and folded legs; with rolls set everywhere): the leg is
    where it is without the tool, OK. (Before, the cleared starts put the leg 0.53 m off with the
    target at the root and turned the bones up to 0.7 rad about their axes elsewhere.)"""
    reference, _, chain = leg_with_ik_twin("Reference")
    move_control(chain, "target", TARGETS[where])
    wanted = _world(reference)
    obj, _, chain = leg_with_ik_twin()
    assert _clear(obj, "Clear User Transforms, all bones")
    bpy.context.view_layer.update()
    move_control(chain, "target", TARGETS[where])
    _assert_same(obj, wanted)
    assert chain.state in ("OK", "WARNING") and "Update Mechanism" not in chain.status, chain.status


def test_a_network_built_before_keeps_playing_and_update_mechanism_adds_the_start_drivers(scene):
    """A network built before its start turns were driven (no driver on them) still follows its
    target and reads OK; Clear User Transforms then makes it ERROR, named, and Update Mechanism
    rebuilds it with the drivers, after which the tool leaves it following, OK."""
    obj, _, chain = leg_with_ik_twin()
    network = package().network
    names = network.naming.parts("thigh", "shin")
    removed = 0
    for field, channels in network.spec.START_DRIVEN.items():
        for channel, index in channels:
            removed += obj.driver_remove(f'pose.bones["{getattr(names, field)}"].{channel}', index)
    assert removed >= 2
    bpy.context.view_layer.update()
    move_control(chain, "target", TARGETS["reachable"])
    target = obj.matrix_world @ obj.pose.bones[chain.target_bone].head
    assert_close(world_tail(obj, "shin"), target, TOLERANCE)
    assert chain.state == "OK", chain.status
    wanted = _world(obj)
    _clear(obj, "Clear User Transforms, all bones")
    bpy.context.view_layer.update()
    move_control(chain, "target", TARGETS["reachable"])
    assert chain.state == "ERROR" and "Update Mechanism" in chain.status, chain.status
    update_mechanism(obj)
    chain = obj.two_bone_ik.chains[0]
    bpy.context.view_layer.update()
    _assert_same(obj, wanted)
    _clear(obj, "Clear User Transforms, all bones")
    bpy.context.view_layer.update()
    move_control(chain, "target", TARGETS["reachable"])
    _assert_same(obj, wanted)
    assert chain.state == "OK", chain.status


def test_clear_user_transforms_on_mirrored_legs_added_on_a_bent_fk_pose(scene):
    """Two legs with mirrored rolls, posed by FK bent off their hinges, get chains from Add with
    Mirror (which sets the rolls to keep the pose); Clear User Transforms of every bone: both chains
    read OK, and their legs are where the network rebuilt by Update Mechanism puts them. (Before,
    both read ERROR naming the aim bone, and the bones were turned about their axes.)"""
    sides = ((".L", 0.2), (".R", -0.2))
    bones = [bone for side, x in sides for bone in leg_bones(foot_tail=(0, -0.15, 0), x=x, suffix=side)]
    obj = make_armature("Legs", bones)
    set_mode(obj, "EDIT")
    for bone in obj.data.edit_bones:
        bone.roll = 0.6 if bone.name.endswith(".L") else -0.6
    set_mode(obj, "OBJECT")
    for side, sign in ((".L", 1.0), (".R", -1.0)):
        for name, euler in (
            (f"thigh{side}", (0.9, -0.3 * sign, 1.1 * sign)),
            (f"shin{side}", (0.3, 0.8 * sign, 0.25 * sign)),
        ):
            obj.pose.bones[name].rotation_mode = "XYZ"
            obj.pose.bones[name].rotation_euler = euler
    bpy.context.view_layer.update()
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=obj.pose.bones["shin.L"]):
        assert bpy.ops.pose.two_bone_ik_add(mirror=True) == {"FINISHED"}
    set_mode(obj, "OBJECT")
    assert len(obj.two_bone_ik.chains) == 2
    assert _clear(obj, "Clear User Transforms, all bones")
    bpy.context.view_layer.update()
    names = [f"{bone}{side}" for side, _ in sides for bone in ("thigh", "shin", "foot")]
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    cleared = [(obj.matrix_world @ evaluated.pose.bones[name].matrix).copy() for name in names]
    for chain in obj.two_bone_ik.chains:
        assert chain.state == "OK", (chain.name, chain.status)
    update_mechanism(obj)
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    for name, before in zip(names, cleared, strict=True):
        after = obj.matrix_world @ evaluated.pose.bones[name].matrix
        assert_close(after.translation, before.translation, TOLERANCE)
        for column in range(3):
            assert_close(after.col[column].xyz, before.col[column].xyz, TOLERANCE)
