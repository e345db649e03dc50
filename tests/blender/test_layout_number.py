# SPDX-License-Identifier: GPL-3.0-or-later
"""Each chain records the network layout it was built with (network/layout.py LAYOUTS, on its
network's root bone), so an upgrade reads a number: a new chain has the current one, the files of
earlier layouts read theirs (from what their root bones hold, for networks built before the
number), and Update Mechanism brings each to the current one."""

from __future__ import annotations

import pathlib
import shutil

import bpy
import pytest
from blender_rig import base_rig, package, update_mechanism

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def current() -> int:
    return package().network.layout.CURRENT_LAYOUT


def test_a_new_chain_records_the_current_layout(scene):
    obj, chain = base_rig()
    layout = package().network.layout
    root = obj.pose.bones[package().network.naming.chain_parts(chain).root]
    assert root[layout.LAYOUT] == current() == chain.layout == max(layout.LAYOUTS)


def test_a_chain_without_a_network_records_none(scene):
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains.add()
    chain.upper_bone, chain.lower_bone = "shin", "thigh"  # no network of these
    assert chain.layout == 0


@pytest.mark.parametrize(
    ("stem", "armature", "before"),
    [
        ("two_bone_ik_root_settings", "Rig", 2),  # the settings on the network's root bone
        ("two_bone_ik_unsided", "Legs", 3),  # the settings on the lower bone, angles as stored
        ("two_bone_ik_0_1_0", "Rig", None),  # no network: built on load, so the current layout
    ],
)
def test_each_earlier_layout_reads_its_number_and_update_mechanism_brings_the_current(
    scene, tmp_path, stem, armature, before
):
    path = tmp_path / f"{stem}.blend"
    shutil.copy(DATA / f"{stem}.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects[armature]
    assert {chain.layout for chain in obj.two_bone_ik.chains} == {before or current()}
    update_mechanism(obj)
    assert {chain.layout for chain in obj.two_bone_ik.chains} == {current()}
