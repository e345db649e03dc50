# SPDX-License-Identifier: GPL-3.0-or-later
"""What a chain puts on its own bones is what network/spec.py's OUTPUTS rows say, and nothing
else: each row's constraint on its slot's bone, of its type, aimed, in its space, driven or kept
muted; and Remove takes every one of them."""

from __future__ import annotations

import bpy
import pytest
from blender_rig import (
    BASE_SHIN,
    BASE_THIGH,
    add_chain,
    add_chain_at,
    leg_bones,
    make_armature,
    make_empty,
    make_leg_with_foot,
    package,
    run,
    set_mode,
)

SLOTS = {"upper": "thigh", "lower": "shin", "end": "foot"}


def _chain_constraints(obj) -> set[tuple[str, str]]:
    """(bone, constraint) of every constraint on the rig's own bones (not the network's)."""
    naming = package().network.naming
    return {
        (bone.name, constraint.name)
        for bone in obj.pose.bones
        if not naming.is_network_bone(bone.name)
        for constraint in bone.constraints
    }


def _aimed(constraint, chain, sources: tuple[str, ...]) -> bool:
    """Whether ``constraint`` aims at the chain's ``sources`` (its target, and an IK's pole too)."""
    pairs = {"target": ("target", "subtarget"), "pole": ("pole_target", "pole_subtarget")}
    return all(
        getattr(constraint, pairs[which][0]) == getattr(chain, which)
        and getattr(constraint, pairs[which][1]) == getattr(chain, f"{which}_bone")
        for which in sources
    )


@pytest.mark.parametrize("controls", ["BONES", "EMPTIES"])
def test_the_chain_bones_carry_the_spec_rows_and_nothing_else(scene, controls):
    obj = make_leg_with_foot()
    chain = add_chain_at(obj, controls=controls)
    chain.end_rotation = "TARGET"
    bpy.context.view_layer.update()
    spec, names = package().network.spec, package().network.naming.chain_parts(chain)
    assert _chain_constraints(obj) == {(SLOTS[row.slot], row.name) for row in spec.OUTPUTS}
    drivers = obj.animation_data.drivers
    for row in spec.OUTPUTS:
        constraint = obj.pose.bones[SLOTS[row.slot]].constraints[row.name]
        assert constraint.type == row.kind
        if row.copies:
            assert (constraint.target, constraint.subtarget) == (obj, getattr(names, row.copies))
        else:
            assert _aimed(constraint, chain, row.sources)
        assert constraint.owner_space == ("LOCAL" if row.space == "LOWER" else row.space)
        posing = row.influence is not None
        assert constraint.enabled == posing
        driver = drivers.find(constraint.path_from_id("influence"))
        assert (driver is not None) == posing
        if posing:
            assert driver.driver.is_valid


def test_end_rotation_fk_takes_its_row_off(scene):
    obj = make_leg_with_foot()
    chain = add_chain_at(obj, controls="BONES")
    chain.end_rotation = "TARGET"
    chain.end_rotation = "FK"
    bpy.context.view_layer.update()
    spec = package().network.spec
    assert _chain_constraints(obj) == {
        (SLOTS[row.slot], row.name) for row in spec.OUTPUTS if row.slot != "end"
    }


def test_remove_takes_every_row(scene):
    obj = make_leg_with_foot()
    chain = add_chain_at(obj, controls="BONES")
    chain.end_rotation = "TARGET"
    bpy.context.view_layer.update()
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, all_chains=True) == {"FINISHED"}
    assert _chain_constraints(obj) == set()


@pytest.mark.parametrize(("named", "end_rotation"), [("upper", "FK"), ("lower", "FK"), ("end", "TARGET")])
def test_a_pole_under_a_bone_named_as_a_slot_is_no_cycle(scene, named, end_rotation):
    """A rig's own bone named as a slot ("upper", "lower", "end") is not one of the chain's bones:
    a pole under it does not move with the chain."""
    bones = [(named, (0, -0.5, 1.0), (0, -0.5, 1.4), None, False)]
    bones += [
        *leg_bones(BASE_THIGH, BASE_SHIN[1], (0, 2, 0.4)),
        ("pole", (1.2, 0.5, 0.5), (1.2, 0.5, 0.7), named, False),
    ]
    obj = make_armature("Leg", bones)
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), None)
    chain.pole, chain.pole_bone, chain.end_rotation = obj, "pole", end_rotation
    bpy.context.view_layer.update()
    assert chain.state == "OK", chain.status


def test_snap_ik_to_fk_refuses_an_end_bone_that_is_no_child(scene):
    """End Rotation Target with an End Bone that is not the lower bone's child: the status is an
    error, and Snap IK to FK refuses the chain, as Bake and Apply do, moving nothing."""
    bones = [
        *leg_bones(BASE_THIGH, BASE_SHIN[1], (0, 2, 0.4)),
        ("toe", (0, 2.5, 0), (0, 2.5, 0.3), None, False),
    ]
    obj = make_armature("Leg", bones)
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    chain.end_rotation, chain.end_bone = "TARGET", "toe"
    bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "not a child" in chain.status
    set_mode(obj, "POSE")
    with pytest.raises(RuntimeError, match="not a child"):
        run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj, chain="shin")
    assert tuple(bpy.data.objects["Target"].location) == pytest.approx((1.2, 0, 0.5))
