# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify's own IK/FK snaps with the forearm and shin turned about their own axes, after Rigify Limbs
on Two-Bone IK (README, "Rigify"): at least as exact as with Rigify's own IK on the same rig and pose.

Rigify runs in a process of its own (``run_blender``, as in test_rigify_limbs.py); one process
measures both rigs (tests/blender/rigify_snap_twist_probe.py).
"""

from __future__ import annotations

import pathlib

import pytest
from blender_rig import run_probe

PROBE = pathlib.Path(__file__).with_name("rigify_snap_twist_probe.py")
FLOAT32 = 1e-5  # m: what float32 leaves of an exact snap on a human's limbs


@pytest.fixture(scope="module")
def measured() -> dict:
    return run_probe(PROBE)[0]


def test_rigify_snaps_of_a_twisted_forearm_and_shin_are_as_exact_as_rigifys_own_ik(measured):
    """The left arm and leg in FK, the forearm turned 0.4 rad and the shin 0.25 rad about their own
    axes: the rig's IK->FK snap (With Roll for the leg), then IK, leaves the DEF bones' heads and
    tails as close to the FK pose as Rigify's own IK does (measured 0.0008 m arm, 0.0041 m leg
    there; the chains 2e-7 m), and its FK->IK snap as close to the IK pose."""
    assert measured["operator"] == ["FINISHED"]
    assert all(status == "" for status in measured["status"].values()), measured["status"]
    rigify, chains = measured["rigify"], measured["chains"]
    assert rigify["arm ik2fk"] == pytest.approx(0.0008, abs=2e-4)
    assert rigify["leg ik2fk"] == pytest.approx(0.0041, abs=1e-3)
    for snap, miss in chains.items():
        assert miss <= max(rigify[snap], FLOAT32), (snap, miss, rigify[snap])
