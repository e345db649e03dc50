# SPDX-License-Identifier: GPL-3.0-or-later
"""What a chain puts on its own bones is what network/spec.py's OUTPUTS rows say, and nothing
else: each row's constraint on its slot's bone, of its type, aimed, in its space, driven or kept
muted; and Remove takes every one of them."""

from __future__ import annotations

import bpy
import pytest
from blender_rig import add_chain_at, make_leg_with_foot, package, run

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
