# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify limbs on exact IK (docs/rigify.md; README, "Rigify"): a human generated
by Rigify, its limbs put on chains through the documented step (Rigify Limbs on Two-Bone IK), against
Rigify's own IK on the same rig and poses.

Rigify runs in a process of its own (``run_blender``, as in test_constrained_rigs.py): unloading it
in the session would break its handlers for later tests. One process measures everything
(tests/blender/rigify_limbs_probe.py); each test checks one claim on its figures.
"""

from __future__ import annotations

import pathlib

import bpy
import pytest
from blender_rig import make_leg, run_probe, set_mode
from mathutils import Matrix

PROBE = pathlib.Path(__file__).with_name("rigify_limbs_probe.py")
LENGTH = 1e-4  # relative: deform bones keep their rest length
TOLERANCE = 1e-5  # m


@pytest.fixture(scope="module")
def measured() -> dict:
    result, output = run_probe(PROBE)
    return {**result, "output": output}


def _worst_length(limbs: dict) -> float:
    return max(abs(error) for limb in limbs.values() for error in limb["length_error"].values())


def test_rigify_limbs_puts_a_chain_on_each_limbs_ik_chain(measured):
    """One click gives each of the four limbs a chain on Rigify's IK chain, aimed at the bone
    Rigify's IK aims at, with Rigify's pole control, and mutes Rigify's two IK constraints there."""
    assert measured["operator"] == ["FINISHED"]
    chains = measured["chains"]
    assert set(chains) == {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"}
    assert chains["MCH-shin_ik.L"] == {
        "upper": "thigh_ik.L",
        "target": "MCH-thigh_ik_target.L",
        "pole": "thigh_ik_target.L",
        "muted": [["MCH-shin_ik.L", "IK"], ["MCH-shin_ik.L", "IK.001"]],
    }
    assert chains["MCH-forearm_ik.R"]["upper"] == "upper_arm_ik.R"
    assert chains["MCH-forearm_ik.R"]["pole"] == "upper_arm_ik_target.R"
    for name, (state, reachable, status) in measured["status"].items():
        assert state == "OK" and reachable, (name, status)
    # The probe set the left limbs as the operator does, to measure Rigify's IK alike; the right
    # ones keep the generated rig's settings (Pole Vector off, IK Stretch 1).
    assert "Pole Vector turned on for 'thigh_parent.R', 'upper_arm_parent.R'" in measured["output"]
    assert "IK Stretch of 'thigh_parent.R', 'upper_arm_parent.R' has no effect" in measured["output"]
    assert "Muted Rigify's IK 'IK' on 'MCH-shin_ik.L', 'IK.001' on 'MCH-shin_ik.L'" in measured["output"]
    assert "Added chain 'MCH-shin_ik.L', 'MCH-shin_ik.R'" in measured["output"]


@pytest.mark.parametrize("pose", ["reachable", "unreachable", "unreachable, IK Stretch 1"])
def test_deform_bones_keep_their_rest_length_where_rigifys_ik_changes_it(measured, pose):
    """With the foot and hand controls moved, within reach and past it (with IK Stretch 0 and 1),
    every deform bone of the leg and arm (thigh, shin, foot, toe; upper arm, forearm, hand) keeps
    its rest length; Rigify's own IK (IK Stretch 0) changes the thigh's and shin's by percents."""
    assert _worst_length(measured["ours"][pose]) < LENGTH
    if pose in measured["native"]:
        assert _worst_length(measured["native"][pose]) > 0.01


@pytest.mark.parametrize("pose", ["reachable", "unreachable"])
def test_the_limb_ends_on_the_bone_rigifys_ik_aims_at(measured, pose):
    """The chain's tail (the ankle, the wrist) is on Rigify's IK target bone, which follows the
    foot (hand) control and its roll; past the reach that bone stops at the reach."""
    for limb in ("leg", "arm"):
        assert measured["ours"][pose][limb]["end_miss"] < TOLERANCE, limb


@pytest.mark.parametrize("pose", ["reachable", "unreachable"])
def test_foot_and_hand_turn_as_with_rigifys_ik(measured, pose):
    """The deform foot and hand take the orientation they have with Rigify's own IK on the same
    controls (the foot's differs by 1.6e-3 rad past the reach, where Rigify's IK stretches the leg
    3.5% further)."""
    for limb, tolerance in (("leg", 2e-3), ("arm", 1e-5)):
        ours = Matrix(measured["ours"][pose][limb]["end_matrix"]).to_quaternion()
        native = Matrix(measured["native"][pose][limb]["end_matrix"]).to_quaternion()
        assert ours.rotation_difference(native).angle < tolerance, limb


def test_ik_fk_switch_blends_rigifys_fk_and_the_chain(measured):
    """Rigify's IK_FK (0 IK, 1 FK) blends its FK bones and the chain as it blends its own IK: the
    ORG bones are the chain's at 0 and the FK bones' at 1, and at 0.5 they turn half-way (slerp),
    as with Rigify's IK; the deform bones keep their length at 0 and 1."""
    for value in ("0.0", "1.0"):
        blend = measured["ours"]["blend"][value]
        assert blend["blend_miss"] < TOLERANCE and blend["blend_angle"] < TOLERANCE, value
        assert blend["length_error"] < LENGTH, value
    ours, native = measured["ours"]["blend"]["0.5"], measured["native"]["blend"]["0.5"]
    assert ours["blend_angle"] < TOLERANCE and native["blend_angle"] < TOLERANCE
    # Blender places a blended bone off the straight line between the two (1.9 cm here, either IK).
    assert ours["blend_miss"] == pytest.approx(native["blend_miss"], abs=1e-3)


def test_rigifys_snap_operators_still_match(measured):
    """Rigify's IK->FK snap (the rig's ``pose.rigify_limb_ik2fk_<rig_id>``) puts the chain on the
    FK pose (exactly; Rigify's own IK misses it by 5 mm at the knee) and its FK->IK snap puts the
    FK bones on the chain's pose."""
    assert max(measured["ours"]["snap_ik_to_fk"].values()) < 1e-4
    assert measured["ours"]["snap_fk_to_ik"] < TOLERANCE


def test_remove_gives_the_limbs_back_to_rigifys_ik(measured):
    """Remove (All Chains) turns Rigify's IK constraints on again as Rigify drives them (with pole
    on: the one with pole), removes the reach limit, and the limbs pose exactly as before."""
    assert measured["remove"] == ["FINISHED"]
    assert measured["ik_enabled"]["MCH-shin_ik.L"] == [["IK", False], ["IK.001", True]]
    assert "Two-Bone IK Reach" not in measured["reach_left"]
    for pose in ("reachable", "unreachable"):
        for limb in ("leg", "arm"):
            removed, native = measured["removed"][pose][limb], measured["native"][pose][limb]
            worst = max(
                sum((a - b) ** 2 for a, b in zip(p, q, strict=True)) ** 0.5
                for p, q in zip(removed["limb"], native["limb"], strict=True)
            )
            assert worst < TOLERANCE, (pose, limb)


def test_update_mechanism_keeps_rigify_limbs_exact(measured):
    """Update Mechanism rebuilds the chains and leaves Rigify's IK muted: status OK, lengths kept."""
    assert measured["update_mechanism"] == ["FINISHED"]
    for name, (state, _reachable, status) in measured["status_rebuilt"].items():
        assert state == "OK", (name, status)
    assert _worst_length(measured["rebuilt"]) < LENGTH


def test_undo_takes_rigify_limbs_back_whole(measured):
    """Undo of Rigify Limbs leaves no chain, and Rigify's IK, its drivers and the target bone's
    constraints as they were."""
    assert measured["operator_undone"] == ["FINISHED"]
    assert measured["undone"] == {
        "chains": 0,
        "ik_enabled": [False, True],
        "drivers_muted": [False, False],
        "constraints": ["Copy Location", "Limit Distance"],
    }


def test_rigify_limbs_again_is_an_error_that_changes_nothing(measured):
    """With a chain on every limb there is nothing to do: an error report, CANCELLED, no chain added."""
    assert "has no Rigify limb without a chain" in measured["operator_third"]
    assert measured["chains_after_third"] == 4


def test_rigify_limbs_is_offered_on_rigify_rigs_only(scene):
    """On an armature Rigify did not generate, the operator cannot run and says why."""
    obj = make_leg()
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert not bpy.ops.pose.two_bone_ik_rigify_limbs.poll()
        with pytest.raises(RuntimeError, match="generated by Rigify"):
            bpy.ops.pose.two_bone_ik_rigify_limbs()
