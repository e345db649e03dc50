# SPDX-License-Identifier: GPL-3.0-or-later
"""A network edited by hand is never silent (docs/design.md, "The native network"): a muted chain
constraint, a lost influence driver, a constraint, driver or key added on a network bone. The
chain's status names what is wrong, its readouts measure the real miss, and Update Mechanism
rebuilds the network to its specified form, removing what was added with a report. Keys on the
chain's own data in the network (its settings, its rolls) stay."""

from __future__ import annotations

import bpy
import pytest
from blender_rig import (
    add_chain_at,
    expected_world,
    fcurves,
    key_setting,
    make_leg_with_foot,
    package,
    world_tail,
)

TOLERANCE = 1e-5  # x chain length (2 m)


def _leg():
    obj = make_leg_with_foot()
    return obj, add_chain_at(obj, (0.4, 0.6, 0.3), controls="EMPTIES")


def _solve_miss(obj, chain) -> float:
    _, end, _ = expected_world(
        obj, chain.target.matrix_world.translation, chain.pole.matrix_world.translation
    )
    return (world_tail(obj, "shin") - end).length


def _mute_constraint(obj, chain):
    obj.pose.bones["shin"].constraints["Two-Bone IK"].mute = True


def _mute_influence_driver_then_disable(obj, chain):
    for fcurve in obj.animation_data.drivers:
        if fcurve.data_path.endswith('constraints["Two-Bone IK"].influence'):
            fcurve.mute = True
    chain.enabled = False  # the panel would say Disabled while the leg stays on the solve


def _limit_rotation_on_a_network_bone(obj, chain):
    limit = obj.pose.bones["MCH-IK-shin"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True


def _driver_on_a_network_bone(obj, chain):
    obj.pose.bones["MCH-IK-thigh"].driver_add("location", 0).driver.expression = "0.3"


@pytest.mark.parametrize(
    ("edit", "state", "words"),
    [
        (_mute_constraint, "ERROR", "constraint on 'shin' is muted"),
        (_mute_influence_driver_then_disable, "ERROR", "influence driver of the chain's constraint"),
        (_limit_rotation_on_a_network_bone, "OFF_TARGET", "the constraint 'Limit Rotation' on 'MCH-IK-shin'"),
        (_driver_on_a_network_bone, "OFF_TARGET", "a driver on 'MCH-IK-thigh' (location)"),
    ],
    ids=["muted-constraint", "muted-influence-driver", "limit-on-network", "driver-on-network"],
)
def test_an_edited_network_says_so_and_update_mechanism_repairs_it(scene, capfd, edit, state, words):
    obj, chain = _leg()
    edit(obj, chain)
    bpy.context.view_layer.update()
    assert chain.state == state and words in chain.status, chain.status
    assert not chain.reachable
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    out = capfd.readouterr().out
    if state == "OFF_TARGET":
        assert "Removed what was added to the network: " + words in out
    chain = obj.two_bone_ik.chains[0]
    bpy.context.view_layer.update()
    assert chain.status == "", chain.status
    if chain.enabled:
        assert _solve_miss(obj, chain) < TOLERANCE * 2.0


def test_update_mechanism_keeps_keys_on_settings_and_rolls_and_removes_others(scene):
    """Keys on the chain's settings and rolls (the lower bone's properties) stay; keys on network
    bones go. (Rewritten when the settings and rolls moved from network bones to the lower bone.)"""
    obj, chain = _leg()
    key_setting(chain, "influence", 1)
    obj.pose.bones["shin"].keyframe_insert('["IK Upper Roll"]', frame=1)
    obj.pose.bones["MCH-IK-thigh"].keyframe_insert("rotation_quaternion", frame=1)
    aim = obj.pose.bones["MCH-IK-shin-aim"]
    aim.keyframe_insert("rotation_quaternion", frame=1)
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    paths = {fcurve.data_path for fcurve in fcurves(obj)}
    assert {'pose.bones["shin"]["IK Influence"]', 'pose.bones["shin"]["IK Upper Roll"]'} <= paths
    assert not [path for path in paths if path.startswith('pose.bones["MCH-IK-')]


def test_update_mechanism_again_leaves_one_network_that_follows_a_new_target(scene, capfd):
    """A network bone made anew under its name keeps its pose channel, constraints and all: the
    rebuild clears them first, so Update Mechanism run again leaves exactly the network's own
    constraints, reports nothing removed, and a new target then moves the leg (a leftover copy of
    the old Target constraint, last in the stack, would keep it on the old one)."""
    obj, chain = _leg()
    own = {bone.name: [constraint.name for constraint in bone.constraints] for bone in obj.pose.bones}
    for _ in range(2):
        with bpy.context.temp_override(active_object=obj, object=obj):
            assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    assert "Removed what was added" not in capfd.readouterr().out
    chain = obj.two_bone_ik.chains[0]
    assert {bone.name: [constraint.name for constraint in bone.constraints] for bone in obj.pose.bones} == own
    new_target = bpy.data.objects.new("New target", None)
    bpy.context.scene.collection.objects.link(new_target)
    new_target.location = (-0.3, 0.5, 0.6)
    chain.target = new_target
    bpy.context.view_layer.update()
    assert chain.status == "", chain.status
    assert _solve_miss(obj, chain) < TOLERANCE * 2.0


def test_renamed_chain_bones_are_named_in_the_status_and_followed_by_update_mechanism(scene, capfd):
    """Renaming the chain's bones (Blender re-points the chain's constraints, not its stored names):
    the status names the new names and Update Mechanism follows them, renaming the network after
    them, so the keyed Influence still plays and the leg solves."""
    obj, chain = _leg()
    key_setting(chain, "influence", 1)
    obj.data.bones["thigh"].name = "femur"
    obj.data.bones["shin"].name = "calf"
    bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "was renamed" in chain.status, chain.status
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    assert "Followed renamed bones: 'thigh' -> 'femur', 'shin' -> 'calf'" in capfd.readouterr().out
    chain = obj.two_bone_ik.chains[0]
    assert (chain.upper_bone, chain.lower_bone) == ("femur", "calf")
    assert not [bone.name for bone in obj.data.bones if "thigh" in bone.name or "shin" in bone.name]
    assert 'pose.bones["calf"]["IK Influence"]' in {fcurve.data_path for fcurve in fcurves(obj)}
    bpy.context.view_layer.update()
    assert chain.status == "", chain.status
    _, end, _ = expected_world(
        obj, chain.target.matrix_world.translation, chain.pole.matrix_world.translation, "femur", "calf"
    )
    assert (world_tail(obj, "calf") - end).length < TOLERANCE * 2.0


@pytest.mark.parametrize(
    "part", ["root", "target", "aim", "pole", "hint", "roll", "end", "hinge", "upper", "lower"]
)
def test_a_network_bone_renamed_by_hand_is_named_in_the_status_and_named_back(scene, capfd, part):
    """A network bone renamed by hand stays wired into the network (Blender re-points constraints,
    drivers and keys at it): the status names both names, and Update Mechanism names it back, so
    the rebuild leaves no copy behind and the keyed Influence still plays."""
    obj, chain = _leg()
    key_setting(chain, "influence", 1)
    name = getattr(package().network.naming.parts("thigh", "shin"), part)
    obj.data.bones[name].name = "renamed by hand"
    bpy.context.view_layer.update()
    assert chain.state == "ERROR", chain.status
    assert f"network bone '{name}' was renamed 'renamed by hand'" in chain.status, chain.status
    before = {bone.name for bone in obj.data.bones}
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    assert f"'renamed by hand' -> '{name}'" in capfd.readouterr().out
    assert {bone.name for bone in obj.data.bones} == before - {"renamed by hand"} | {name}
    assert 'pose.bones["shin"]["IK Influence"]' in {fcurve.data_path for fcurve in fcurves(obj)}
    bpy.context.view_layer.update()
    assert chain.status == "", chain.status
    assert _solve_miss(obj, chain) < TOLERANCE * 2.0


@pytest.mark.parametrize("part", ["aim", "hinge", "lower"])
def test_remove_takes_a_network_bone_renamed_by_hand(scene, part):
    """Remove on a chain whose network bone was renamed by hand (its status names it) used to leave
    that bone with its constraint, driver and the network's bone collection, and a depsgraph error
    on every rebuild. It goes under its new name now, and the FK pose is back."""
    obj, _ = _leg()
    name = getattr(package().network.naming.parts("thigh", "shin"), part)
    obj.data.bones[name].name = "renamed by hand"
    bpy.context.view_layer.update()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove(chain="shin") == {"FINISHED"}
    assert {bone.name for bone in obj.data.bones} == {"thigh", "shin", "foot"}
    assert not [c.name for bone in obj.pose.bones for c in bone.constraints]
    assert not (obj.animation_data and len(obj.animation_data.drivers))
    assert obj.data.collections_all.get("Two-Bone IK Mechanism") is None
