# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify Limbs on every stock Rigify metarig (docs/rigify.md, "On every metarig Rigify ships"):
each rig generated with IK_FK 0 and IK_Stretch 0 on every limb, then Rigify Limbs on Two-Bone IK,
then each limb's IK control moved 7 cm; measured against Rigify's own IK on the same rig and moves.

One Blender process generates every metarig once and measures everything
(tests/blender/rigify_metarigs_probe.py, about 20 s); Rigify runs there, not in the test session.
"""

from __future__ import annotations

import pathlib

import pytest
from blender_rig import run_probe

PROBE = pathlib.Path(__file__).with_name("rigify_metarigs_probe.py")
LENGTH = 1e-5  # relative: deform bones keep their rest length
# Relative to the chain's length: Blender's rest data of the paws' IK bones disagrees with itself by
# 1.25e-5 (a bone's length against its head-tail distance, float32 through Rigify's deep parenting),
# so the limb's end there is up to 1.7e-5 of the chain's length off the target bone (measured).
END = 2e-5
# The metarigs of Blender 4.2-5.3's Rigify, and the chains each gets (the limbs' IK chains' lower
# bones). The paws' helper IK (MCH-shin_ik2.L...) and the Shark's fins get none.
CHAINS = {
    "basic_human": {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"},
    "basic_quadruped": {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-front_shin_ik.L", "MCH-front_shin_ik.R"},
    "bird": {"MCH-shin_ik.L", "MCH-shin_ik.R"},
    "cat": {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"},
    "horse": {"MCH-lower_leg_ik.L", "MCH-lower_leg_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"},
    "human": {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"},
    "shark": set(),
    "wolf": {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-front_shin_ik.L", "MCH-front_shin_ik.R"},
}


@pytest.fixture(scope="module")
def measured() -> dict:
    result, output = run_probe(PROBE)
    sections = output.split("METARIG ")[1:]
    for section in sections:  # each rig's reports and depsgraph warnings, by metarig
        name = section.split("\n", 1)[0].strip()
        result[name]["output"] = section.split("MEASURED ", 1)[0]
    return result


def test_every_stock_metarig_is_measured(measured):
    """The probe generated every metarig Rigify offers, the eight of Blender 4.2-5.3 among them."""
    assert set(CHAINS) <= set(measured)


@pytest.mark.parametrize("metarig", sorted(CHAINS))
def test_rigify_limbs_puts_chains_on_the_limbs_only(measured, metarig):
    """Chains only on the two-bone limb systems Rigify's limbs solve (those whose bones Rigify's
    ORG bones copy), each OK, no dependency cycle; the paws' helper IK is named in the report as
    left alone; a rig with no limb (the Shark) is an error that changes nothing."""
    rig = measured[metarig]
    assert set(rig["chains"]) == CHAINS[metarig]
    assert "Dependency cycle" not in rig["output"]
    for name, (_upper, _target, _pole, state, status) in rig["chains"].items():
        assert state == "OK", (name, status)
    if CHAINS[metarig]:
        assert rig["operator"] == ["FINISHED"]
        assert set(rig["states_moved"].values()) == {"OK"}
    else:
        assert "has no Rigify limb" in rig["operator"][0]
    if metarig in ("basic_quadruped", "cat", "horse", "wolf"):
        assert "_ik2.L': no bone copies its pose" in rig["output"]


@pytest.mark.parametrize("metarig", sorted(name for name, chains in CHAINS.items() if chains))
def test_limbs_deform_bones_keep_their_length_and_the_rest_is_rigifys(measured, metarig):
    """With every limb's IK control moved 7 cm, the limbs' deform bones keep their rest length
    (Rigify's own IK changes them by 0.8-2.1%), the limb's end is on Rigify's IK target bone, and
    every other deform bone changes no more than with Rigify's own IK (the paws' third segment,
    which Rigify's stretching helper IK turns, as much; the Human's feet, which follow its stretched
    shins, less); no other constraint or driver of the rig changed, and
    nothing moved at rest."""
    rig = measured[metarig]
    assert rig["ours"]["deform_length"]["limbs"][0] < LENGTH
    assert rig["native"]["deform_length"]["limbs"][0] > 0.005
    assert rig["ours"]["deform_length"]["others"][0] <= rig["native"]["deform_length"]["others"][0] + LENGTH
    assert rig["end_miss"] < END
    assert rig["others_changed"] == []
    assert rig["rest_moved"] < 5e-5


@pytest.mark.parametrize("metarig", sorted(name for name, chains in CHAINS.items() if chains))
def test_rigifys_snaps_are_as_exact_as_with_its_own_ik(measured, metarig):
    """Rigify's IK->FK snap is closer with the chains than with Rigify's own IK (which stretches),
    and its FK->IK snap exact with both."""
    rig = measured[metarig]
    assert rig["ours"]["ik_to_fk"] <= max(rig["native"]["ik_to_fk"], 1e-5)
    assert rig["ours"]["fk_to_ik"] < 1e-5 and rig["native"]["fk_to_ik"] < 1e-5


@pytest.mark.parametrize("metarig", sorted(name for name, chains in CHAINS.items() if chains))
def test_remove_gives_every_metarigs_rig_back(measured, metarig):
    """Remove (All Chains) gives the rig back: every constraint and driver as Rigify made it, and
    the same pose as Rigify's own IK with the controls moved."""
    rig = measured[metarig]
    assert rig["remove"] == ["FINISHED"]
    assert rig["removed_changed"] == []
    assert rig["removed_pose"] < 1e-5
