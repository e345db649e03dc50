# SPDX-License-Identifier: GPL-3.0-or-later
"""Join (Ctrl+J) of armatures with chains: the joined armature's networks come along, its chains
(data of the object Join deletes) do not. Update Mechanism makes each joined network a chain again
(docs/design.md, "The native network"), with its target, pole, settings and rolls, and a network of
its own; both legs then solve to 1e-5 m, and the first one was never taken over."""

from __future__ import annotations

import json

import bpy
import pytest
from blender_rig import (
    BASE_SHIN,
    BASE_THIGH,
    add_chain_at,
    exited_cleanly,
    expected_world,
    leg_bones,
    make_armature,
    make_leg_with_foot,
    package,
    run_blender,
    world_tail,
)

TOLERANCE = 1e-5  # x chain length (2 m)


def _legs():
    first = make_leg_with_foot("A")
    add_chain_at(first, controls="EMPTIES")
    second = make_leg_with_foot("B")
    second.location.x = 2.0
    chain = add_chain_at(second, controls="EMPTIES")
    chain.twist, chain.softness, chain.end_rotation = 0.3, 0.2, "TARGET"
    return first, second


def _join(active, other) -> None:
    for obj in bpy.context.scene.objects:
        obj.select_set(obj in (active, other))
    bpy.context.view_layer.objects.active = active
    with bpy.context.temp_override(
        active_object=active, object=active, selected_editable_objects=[active, other]
    ):
        assert bpy.ops.object.join() == {"FINISHED"}


def _miss(obj, chain) -> float:
    settings = {"twist": chain.twist, "softness": chain.softness}
    target, pole = chain.target.matrix_world.translation, chain.pole.matrix_world.translation
    _, end, _ = expected_world(obj, target, pole, chain.upper_bone, chain.lower_bone, **settings)
    return (world_tail(obj, chain.lower_bone) - end).length


def test_update_mechanism_makes_joined_networks_chains_again(scene, capfd):
    obj, other = _legs()
    _join(obj, other)
    assert [chain.name for chain in obj.two_bone_ik.chains] == ["shin"]
    assert package().chain.adopt.orphans(obj) == ["MCH-IK-shin-root.001"]  # the panel says so
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    assert "Made the joined network(s) chains again: shin.001" in capfd.readouterr().out
    first, joined = obj.two_bone_ik.chains
    assert (joined.upper_bone, joined.lower_bone) == ("thigh.001", "shin.001")
    assert joined.target.name == "IK Target shin.001" and joined.pole.name == "IK Pole shin.001"
    assert (joined.twist, joined.softness, joined.end_rotation) == (
        pytest.approx(0.3),
        pytest.approx(0.2),
        "TARGET",
    )
    assert not [bone.name for bone in obj.data.bones if bone.name.endswith("-root.001")]
    for chain, offset in ((first, (0.3, 0.4, 0.5)), (joined, (2.2, -0.3, 0.6))):
        chain.target.matrix_world.translation = offset
    bpy.context.view_layer.update()
    for chain in (first, joined):
        assert chain.state == "OK", chain.status
        assert _miss(obj, chain) < TOLERANCE * 2.0, chain.name
    assert obj.pose.bones["shin.001"].constraints["Two-Bone IK"].subtarget == "MCH-IK-shin.001"
    assert obj.pose.bones["thigh"].constraints["Two-Bone IK"].subtarget == "MCH-IK-thigh"


def test_joined_legs_whose_names_end_in_a_number_are_both_chains(scene):
    """Join renames a numbered bone by its number (``shin.001`` to ``shin.002``, and the solved
    ``MCH-IK-shin.001`` likewise), not by a suffix: Update Mechanism still finds the joined network's
    chain bones, and both legs are chains that solve."""
    legs = []
    for name, x in (("A", 0.0), ("B", 2.0)):
        obj = make_armature(name, leg_bones(BASE_THIGH, BASE_SHIN[1], (0, 2, 0.4), suffix=".001"))
        obj.location.x = x
        add_chain_at(obj, controls="EMPTIES", upper="thigh.001", lower="shin.001")
        legs.append(obj)
    _join(*legs)
    obj = legs[0]
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    assert [chain.lower_bone for chain in obj.two_bone_ik.chains] == ["shin.001", "shin.002"]
    assert package().chain.adopt.orphans(obj) == []
    for chain, offset in zip(obj.two_bone_ik.chains, ((0.3, 0.4, 0.5), (2.2, -0.3, 0.6)), strict=True):
        chain.target.matrix_world.translation = offset
    bpy.context.view_layer.update()
    for chain in obj.two_bone_ik.chains:
        assert chain.state == "OK", chain.status
        assert _miss(obj, chain) < TOLERANCE * 2.0, chain.name


def test_the_command_line_names_joined_networks_of_no_chain(scene, tmp_path):
    """After a Join the joined limb's network has no chain (the attack measured it 0.2 m off its
    solve), so it is in no row of a report: report exits 1 naming it, after writing the rows, and
    bake bakes the chains with a warning naming it. Update Mechanism (the panel's box too) makes
    it a chain."""
    obj, other = _legs()
    _join(obj, other)
    path = tmp_path / "joined.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    process = run_blender(
        f"""
        execute = package().cli.execute
        result = {{"report": execute(["report", {str(path)!r}, "--start", "1", "--end", "1"])}}
        print("CASE bake", file=sys.stderr, flush=True)
        result["bake"] = execute(["bake", {str(path)!r}, "--start", "1", "--end", "2"])
        print("RESULT " + json.dumps(result))
        """
    )
    lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
    assert exited_cleanly(process.returncode) and lines, process.stderr
    assert json.loads(lines[-1][len("RESULT ") :]) == {"report": 1, "bake": 0}
    report, _, bake = process.stderr.partition("CASE bake")
    named = "networks of no chain, from a Join (their limbs are not solved), on 'A': MCH-IK-shin-root.001"
    assert [line for line in report.splitlines() if line.startswith("two_bone_ik:")] == [
        f"two_bone_ik: error: {named}: run Pose > Two-Bone IK > Update Mechanism to make them chains"
    ]
    assert f"two_bone_ik: warning: {named}" in bake
    assert "Traceback" not in process.stderr
